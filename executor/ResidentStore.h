//===- ResidentStore.h - Tensors one session keeps in the executor -*- C++ -*-===//
//
// A host uploads a tensor once and names it by an id of its choosing
// (wire/Residents.h); later launches of the same session use it where it
// is. This is where such tensors live: each in a buffer of its own, freed
// when the host releases it or when the connection ends (the store goes
// with its ConnectionServices). Buffers are std::free()d, so a kernel's own
// output can be kept the same way, without a copy.
//
// Every resident's bytes count against the store's cap (--max-resident-mib)
// and against the connection's MemoryBudget (--max-slab-mib), whichever is
// reached first refusing it, naming its option.
//
//   ResidentStore Store(Budget, 8 << 30);
//   auto Buffer = Store.reserve(7, Shape); // the upload's payload lands there
//   const ResidentStore::Resident *R = Store.find(7);
//   Store.release(7);
//
// Threads: the connection's transport reader only, which reads uploads,
// launches, fetches and releases one message at a time; construction and
// destruction on the connection's main thread, before and after it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_RESIDENTSTORE_H
#define CATALYST_REMOTE_EXECUTOR_RESIDENTSTORE_H

#include "MemoryBudget.h"
#include "wire/Residents.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace catalyst::remote::executor {

class ResidentStore {
public:
  struct Resident {
    void *Allocated = nullptr; // what std::free() takes
    char *Data = nullptr;      // its values, dense
    wire::TensorShape Shape;
  };

  // Budget outlives the store; Cap bounds what the store keeps at once.
  ResidentStore(MemoryBudget &Budget, uint64_t Cap) : Budget(Budget), Cap(Cap) {}
  ~ResidentStore();
  ResidentStore(const ResidentStore &) = delete;
  ResidentStore &operator=(const ResidentStore &) = delete;

  // A fresh buffer of Shape's bytes (64-byte aligned), kept as resident Id;
  // an error when Id is in use or the bytes pass a cap.
  llvm::Expected<char *> reserve(uint64_t Id, const wire::TensorShape &Shape);
  // Keeps a kernel's output as resident Id, without a copy: Allocated
  // (from malloc) is the store's from now on, Data its values, dense; an
  // error when Id is in use or the bytes pass a cap (Allocated is then
  // still the caller's).
  llvm::Error adopt(uint64_t Id, void *Allocated, char *Data, const wire::TensorShape &Shape);
  // Frees resident Id; an error naming it when there is none.
  llvm::Error release(uint64_t Id);
  // Resident Id, or null.
  const Resident *find(uint64_t Id) const;
  // Resident Id, or an error saying there is none.
  llvm::Expected<const Resident &> get(uint64_t Id) const;
  // Whether Allocated is a resident's buffer: a kernel that hands one back
  // as its output does not make it the kernel's to free.
  bool holdsBuffer(const void *Allocated) const { return Buffers.count(Allocated); }

  size_t size() const { return Kept.size(); }
  uint64_t bytes() const { return Held; }

private:
  llvm::Expected<uint64_t> take(uint64_t Id, const wire::TensorShape &Shape);
  void insert(uint64_t Id, uint64_t Bytes, const Resident &R);
  static llvm::Error missing(uint64_t Id);

  MemoryBudget &Budget; // thread-safe itself
  const uint64_t Cap;
  llvm::DenseMap<uint64_t, Resident> Kept; // the reader's (see above)
  llvm::DenseSet<const void *> Buffers;    // Kept's Allocated
  uint64_t Held = 0;                       // bytes of Kept, together
};

} // namespace catalyst::remote::executor

#endif
