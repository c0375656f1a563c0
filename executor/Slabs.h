//===- Slabs.h - Executor memory a session's inputs land in -----*- C++ -*-===//
//
// Zero-copy launches receive input payloads straight from the socket into
// these regions, so every destination a host names is checked against them.
// Regions are reserved once and reused: 2 MiB aligned and advised for
// transparent huge pages, so first touches fault once per 2 MiB. A host on
// this machine gets shared ones instead: sealed memfds (wire/SharedMemory.h)
// it maps too and writes the inputs into itself.
//
// Every slab's bytes are counted against the connection's MemoryBudget,
// given at construction, which must outlive the slabs.
//
// Threads: reserve(), reserveShared() and release() on the workers that
// run the host's service calls; hold() on the transport's reader placing
// a zero-copy payload and on workers running a launch. Every method takes
// M; ByBase is GUARDED_BY it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_SLABS_H
#define CATALYST_REMOTE_EXECUTOR_SLABS_H

#include "MemoryBudget.h"
#include "sync/Mutex.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>

namespace catalyst::remote::executor {

class Slabs {
public:
  explicit Slabs(MemoryBudget &Budget) : Budget(Budget) {}
  Slabs(const Slabs &) = delete;
  Slabs &operator=(const Slabs &) = delete;

  llvm::Expected<char *> reserve(uint64_t Bytes);
  // A slab in a sealed memfd: Fd receives the descriptor, the caller's to
  // pass on and close; Usable the slab's bytes (Bytes rounded up).
  llvm::Expected<char *> reserveShared(uint64_t Bytes, int &Fd, uint64_t &Usable);
  llvm::Error release(char *Base);

  // The slabs held still while places are checked against them: a launch
  // checks each of its memrefs, and takes the lock once for all of them.
  class Held {
  public:
    // True when [P, P + Bytes) lies inside one slab (one shared slab).
    // Lock holds S.M for as long as this object lives, which the analysis
    // cannot see through hold()'s return: each says so (assertHeld()).
    bool contains(const char *P, uint64_t Bytes) const {
      S.M.assertHeld();
      return S.find(P, Bytes);
    }
    bool containsShared(const char *P, uint64_t Bytes) const;

  private:
    friend class Slabs;
    explicit Held(const Slabs &S) : S(S), Lock(S.M) {}
    const Slabs &S;
    sync::UniqueLock Lock;
  };
  Held hold() const { return Held(*this); }

private:
  struct Mapping {
    void *Start;
    size_t Length;
    uint64_t Usable;
    bool Shared;
  };
  llvm::Expected<char *> map(uint64_t Bytes, int Fd, uint64_t &Usable);
  const Mapping *find(const char *P, uint64_t Bytes) const REQUIRES(M);
  MemoryBudget &Budget; // set at construction; thread-safe itself
  mutable sync::Mutex M;
  std::map<char *, Mapping> ByBase GUARDED_BY(M);
};

} // namespace catalyst::remote::executor

#endif
