//===- TaskPool.cpp - The host's ORC tasks on long-lived threads ----------===//

#include "TaskPool.h"

namespace catalyst::remote {

TaskPool::~TaskPool() {
  shutdown();
}

void TaskPool::dispatch(std::unique_ptr<llvm::orc::Task> T) {
  sync::UniqueLock Lock(M);
  if (Stopping) {
    // ORC may still complete calls while the session ends; run them here.
    Lock.unlock();
    T->run();
    return;
  }
  Queue.push_back(std::move(T));
  if (Idle == 0)
    Threads.emplace_back([this] { run(); });
  else
    Ready.notify_one();
}

void TaskPool::shutdown() {
  std::vector<std::thread> Joining;
  {
    sync::MutexLock Lock(M);
    Stopping = true;
    Joining.swap(Threads);
  }
  Ready.notify_all();
  for (auto &T : Joining)
    if (T.get_id() != std::this_thread::get_id())
      T.join();
    else
      T.detach();
}

uint64_t TaskPool::waitIdle() {
  sync::UniqueLock Lock(M);
  Drained.wait(Lock, [this]() REQUIRES(M) { return Queue.empty() && Running == 0; });
  return FinishedTasks;
}

bool TaskPool::idleSince(uint64_t Finished) {
  sync::MutexLock Lock(M);
  return Queue.empty() && Running == 0 && FinishedTasks == Finished;
}

void TaskPool::run() {
  sync::UniqueLock Lock(M);
  for (;;) {
    ++Idle;
    Ready.wait(Lock, [this]() REQUIRES(M) { return Stopping || !Queue.empty(); });
    --Idle;
    if (Queue.empty())
      return;
    auto T = std::move(Queue.front());
    Queue.pop_front();
    ++Running;
    Lock.unlock();
    T->run();
    T.reset();
    Lock.lock();
    --Running;
    ++FinishedTasks;
    if (Queue.empty() && Running == 0)
      Drained.notify_all();
  }
}

} // namespace catalyst::remote
