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
  ~WorkerPool() override;

  void dispatch(llvm::unique_function<void()> Work) override;
  // Runs what is queued, then stops the threads.
  void shutdown() override;

private:
  void run();

  std::mutex M;
  std::condition_variable Ready;
  std::deque<llvm::unique_function<void()>> Queue;
  bool Stopping = false;
  std::vector<std::thread> Threads;
};

} // namespace catalyst::remote::executor

#endif
