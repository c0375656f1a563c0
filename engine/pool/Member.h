//===- Member.h - One executor of a pool and its session --------*- C++ -*-===//
//
// A member is one announced executor and the session the pool opened to
// it. The pool hands members to the threads that use them as shared_ptrs,
// counting each use of the session in Holds (and each call placed on it in
// Running, which placement reads). Once a member is dropped (Gone) no new
// use starts, and the pool closes its session when the last use ends,
// keeping its final counters.
//
// Thread safety: Name, Address, Order and Session are set at creation.
// Holds, Running, Started, Shipped, UploadsSeen and WorkerDone are atomics
// any thread updates. Gone, Dropped, Final, Released, Idle and Residents
// are the pool's: read and written under its mutex, with which Wake is
// waited on. ShipMutex makes one thread at a time ship the pool's binaries
// and uploads. Follows is the joining thread's until the member is among
// the pool's members, then read and written under the pool's TraceMutex.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_ENGINE_POOL_MEMBER_H
#define CATALYST_REMOTE_ENGINE_POOL_MEMBER_H

#include "catalyst/remote/Session.h"
#include "catalyst/remote/Stats.h"
#include "sync/Mutex.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

namespace catalyst::remote::pool {

struct Member {
  Member(std::string Name, std::string Address, std::unique_ptr<Session> S, uint64_t Order)
      : Name(std::move(Name)), Address(std::move(Address)), Order(Order), S(std::move(S)) {}

  // "NAME (ADDRESS)", or the address alone when it is the name.
  std::string label() const { return Name == Address ? Address : Name + " (" + Address + ")"; }

  const std::string Name, Address;
  const uint64_t Order; // joining order, among every member the pool had

  // Valid until Released; only a thread counted in Holds, or the pool
  // under its mutex, may use it.
  std::unique_ptr<Session> S;

  std::atomic<uint64_t> Holds{0};   // threads using the session now
  std::atomic<uint64_t> Running{0}; // calls placed here and not yet done
  std::atomic<uint64_t> Started{0}; // launches placed here so far
  sync::Mutex ShipMutex;
  std::atomic<size_t> Shipped{0}; // the pool's binaries sent, in order

  // The pool's residents this member's session holds: the pool's id, and
  // the session's handle for it. The pool's, under its mutex; uploads are
  // put here under ShipMutex too, so that one thread at a time sends them.
  std::map<uint64_t, Resident> Residents;
  // Which of the pool's uploads (PoolImpl.h, UploadsMade) were looked for
  // here: none is missing while it equals the pool's count.
  std::atomic<uint64_t> UploadsSeen{0};

  // The pool's, under its mutex.
  bool Gone = false;
  std::string Dropped;   // why, once Gone
  bool Released = false; // session closed and freed; Final holds its stats
  SessionStats Final;

  // The path of the pool's trace its session traces to (empty: none); a
  // trace the session has from elsewhere (forEachMember) is not the pool's.
  std::string Follows;

  // Runs the asynchronous launches handed to this member, once any was
  // made; joined by the pool (the watcher, or close()) once WorkerDone.
  // Idle: it has a worker that holds no launch, so the pool may hand it
  // one, and then wakes it with Wake.
  std::thread Worker;
  std::atomic<bool> WorkerDone{false};
  bool Idle = false;
  sync::CondVar Wake;
};

} // namespace catalyst::remote::pool

#endif
