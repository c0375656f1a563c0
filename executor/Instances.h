//===- Instances.h - The service objects a host may name --------*- C++ -*-===//
//
// ORC's way with executor services: each is an object, published as an
// instance bootstrap symbol; the host passes that address back with every
// call, and the wrapper function reaches the object through it. ORC's own
// wrappers trust the address. Ours check it first: while a Registered<T>
// lives, its object is in T's table under the address the host is given,
// and instanceAt<T>() finds only what is there. A host naming anything
// else gets an error naming the address, never a wild pointer.
//
//   class ConnectionServices {
//     Slabs Regions;
//     Registered<Slabs> RegionsEntry{Regions}; // published as its address
//   };
//   auto S = instanceAt<Slabs>(At, "slab service"); // in a wrapper
//
// The tables are process-wide, as a plain C wrapper needs, and hold
// addresses only: who owns each object, and how long it lives, is its
// owner's business (the connection's, ConnectionServices.h).
//
// Thread-safety: any thread. The tables are never destroyed: a kernel's
// exit() runs static destructors while workers may still look up.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_INSTANCES_H
#define CATALYST_REMOTE_EXECUTOR_INSTANCES_H

#include "sync/Mutex.h"

#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace catalyst::remote::executor {

template <typename T> class InstanceTable {
public:
  static InstanceTable &get() {
    static auto *Table = new InstanceTable; // never destroyed (see above)
    return *Table;
  }

  void add(llvm::orc::ExecutorAddr Key, T &Object) {
    sync::MutexLock Lock(M);
    Live.push_back({Key, &Object});
  }
  void remove(llvm::orc::ExecutorAddr Key) {
    sync::MutexLock Lock(M);
    Live.erase(std::remove_if(Live.begin(), Live.end(), [&](auto &E) { return E.first == Key; }),
               Live.end());
  }
  T *find(llvm::orc::ExecutorAddr Key) const {
    sync::MutexLock Lock(M);
    for (auto &[K, Object] : Live)
      if (K == Key)
        return Object;
    return nullptr;
  }

private:
  InstanceTable() = default;
  mutable sync::Mutex M;
  std::vector<std::pair<llvm::orc::ExecutorAddr, T *>> Live GUARDED_BY(M); // a few at most
};

// Object in T's table under Key (its own address unless given) for as long
// as this lives; Object must outlive it.
template <typename T> class Registered {
public:
  explicit Registered(T &Object) : Registered(Object, llvm::orc::ExecutorAddr::fromPtr(&Object)) {}
  Registered(T &Object, llvm::orc::ExecutorAddr Key) : Key(Key) {
    InstanceTable<T>::get().add(Key, Object);
  }
  ~Registered() { InstanceTable<T>::get().remove(Key); }
  Registered(const Registered &) = delete;
  Registered &operator=(const Registered &) = delete;

  llvm::orc::ExecutorAddr address() const { return Key; }

private:
  llvm::orc::ExecutorAddr Key;
};

// The T registered under At, or an error naming What ("the slab service")
// and the address.
template <typename T> llvm::Expected<T &> instanceAt(llvm::orc::ExecutorAddr At, const char *What) {
  if (T *Object = InstanceTable<T>::get().find(At))
    return *Object;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "no %s at %#llx in this executor",
                                 What, (unsigned long long)At.getValue());
}

} // namespace catalyst::remote::executor

#endif
