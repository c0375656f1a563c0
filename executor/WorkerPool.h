//===- WorkerPool.h - Long-lived threads serving one connection -*- C++ -*-===//
//
// ORC's stock ThreadDispatcher starts a thread per incoming call; a launch
// path that wants one round trip in tens of microseconds cannot afford that.
// These threads live as long as the connection.
//
// Threads: ORC's server calls dispatch() from the connection's reader
// thread (and from workers, for calls a call makes); the workers run
// run(); shutdown() runs on the reader thread as the connection ends, or
// on a worker; the destructor on the pool's owner.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_WORKERPOOL_H
#define CATALYST_REMOTE_EXECUTOR_WORKERPOOL_H

#include "sync/Mutex.h"

#include "llvm/ExecutionEngine/Orc/TargetProcess/SimpleRemoteEPCServer.h"

#include <deque>
#include <thread>
#include <vector>

namespace catalyst::remote::executor {

class WorkerPool final : public llvm::orc::SimpleRemoteEPCServer::Dispatcher {
public:
  explicit WorkerPool(unsigned Threads);
  // Joins every thread; runs on the pool's owner, never on a worker.
  ~WorkerPool() override;

  void dispatch(llvm::unique_function<void()> Work) override;
  // Runs what is queued, then joins every thread but the caller's own (a
  // worker cannot join itself; the destructor joins it).
  void shutdown() override;

private:
  void run(size_t Slot) EXCLUDES(M);
  bool joinOneOther(sync::UniqueLock &Lock) REQUIRES(M);

  sync::Mutex M;
  sync::CondVar Ready;  // work was queued, or Stopping was set
  sync::CondVar Exited; // a worker left run()
  std::deque<llvm::unique_function<void()>> Queue GUARDED_BY(M);
  bool Stopping GUARDED_BY(M) = false;
  // One slot per worker: its thread (moved out by whoever joins it) and
  // whether it has left run().
  std::vector<std::thread> Threads GUARDED_BY(M);
  std::vector<bool> Left GUARDED_BY(M);
};

} // namespace catalyst::remote::executor

#endif
