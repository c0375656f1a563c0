//===- TaskPool.h - The host's ORC tasks on long-lived threads --*- C++ -*-===//
//
// ORC runs the completion of every asynchronous EPC call, and every
// materialization, as a task. Its DynamicThreadPoolTaskDispatcher starts a
// thread for each, which costs more than a loopback round trip; the batched
// and naive strategies make several such calls per launch. Here threads are
// kept once started. A task may block waiting for another, so a task never
// waits for a thread: when none is idle, another one starts.
//
// Threads: ORC calls dispatch() from any thread (the transport's reader,
// callers, tasks themselves); the pool's threads run run(), each task on
// one of them; waitIdle() and idleSince() are the launching thread's;
// shutdown() runs as the session's EPC ends.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_TASKPOOL_H
#define CATALYST_REMOTE_SESSION_TASKPOOL_H

#include "sync/Mutex.h"

#include "llvm/ExecutionEngine/Orc/TaskDispatch.h"

#include <deque>
#include <thread>
#include <vector>

namespace catalyst::remote {

class TaskPool final : public llvm::orc::TaskDispatcher {
public:
  ~TaskPool() override;

  void dispatch(std::unique_ptr<llvm::orc::Task> T) override;
  // Runs what is queued and stops the threads.
  void shutdown() override;

  // Waits until no task is queued or running; returns how many tasks have
  // finished so far.
  uint64_t waitIdle();
  // True when no task is queued or running and Finished tasks have finished
  // in all: none started since waitIdle returned Finished.
  bool idleSince(uint64_t Finished);

private:
  void run() EXCLUDES(M);

  sync::Mutex M;
  sync::CondVar Ready;   // with M: a task was queued, or Stopping was set
  sync::CondVar Drained; // with M: no task is queued or running
  size_t Running GUARDED_BY(M) = 0;
  uint64_t FinishedTasks GUARDED_BY(M) = 0;
  std::deque<std::unique_ptr<llvm::orc::Task>> Queue GUARDED_BY(M);
  std::vector<std::thread> Threads GUARDED_BY(M);
  size_t Idle GUARDED_BY(M) = 0;
  bool Stopping GUARDED_BY(M) = false;
};

} // namespace catalyst::remote

#endif
