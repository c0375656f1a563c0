//===- WorkerPool.h - Long-lived threads serving one connection -*- C++ -*-===//
//
// ORC's stock ThreadDispatcher starts a thread per incoming call; a launch
// path that wants one round trip in tens of microseconds cannot afford that.
// These threads live as long as the connection.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_WORKERPOOL_H
#define CATALYST_REMOTE_EXECUTOR_WORKERPOOL_H

#include "llvm/ExecutionEngine/Orc/TargetProcess/SimpleRemoteEPCServer.h"

#include <condition_variable>
#include <deque>
#include <mutex>
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
  void run(size_t Slot);
  bool joinOneOther(std::unique_lock<std::mutex> &Lock);

  std::mutex M;
  std::condition_variable Ready;                   // work was queued, or Stopping was set
  std::condition_variable Exited;                  // a worker left run()
  std::deque<llvm::unique_function<void()>> Queue; // guarded by M
  bool Stopping = false;                           // guarded by M
  // One slot per worker, guarded by M: its thread (moved out by whoever
  // joins it) and whether it has left run().
  std::vector<std::thread> Threads;
  std::vector<bool> Left;
};

} // namespace catalyst::remote::executor

#endif
