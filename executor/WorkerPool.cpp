//===- WorkerPool.cpp - Long-lived threads serving one connection ---------===//

#include "WorkerPool.h"

#include "CrashReporter.h"
#include "Heartbeat.h"

#include <cassert>

namespace catalyst::remote::executor {

WorkerPool::WorkerPool(unsigned N) : Left(N, false) {
  sync::MutexLock Lock(M);
  for (unsigned I = 0; I < N; ++I)
    Threads.emplace_back([this, I] {
      prepareThreadForCrashes();
      run(I);
    });
}

WorkerPool::~WorkerPool() {
  shutdown();
  sync::MutexLock Lock(M);
  for (auto &T : Threads) {
    assert(!T.joinable() || T.get_id() != std::this_thread::get_id());
    if (T.joinable())
      T.join();
  }
}

void WorkerPool::dispatch(llvm::unique_function<void()> Work) {
  {
    sync::MutexLock Lock(M);
    Queue.push_back(std::move(Work));
  }
  Ready.notify_one();
}

// Joins the workers in the order they leave, not in slot order: while one
// is held in a kernel, those that left are joined at once. A connection
// process may end with _exit while that kernel runs (its host gone), and
// then no thread of it is left finished but never joined.
void WorkerPool::shutdown() {
  sync::UniqueLock Lock(M);
  Stopping = true;
  Ready.notify_all();
  while (joinOneOther(Lock)) {
  }
}

// Joins one worker other than the caller, waiting for one to leave run()
// if none has yet; false when no other is left to join. Called with Lock
// held, and returns with it held.
bool WorkerPool::joinOneOther(sync::UniqueLock &Lock) {
  const auto Self = std::this_thread::get_id();
  for (;;) {
    bool Others = false;
    for (size_t I = 0; I < Threads.size(); ++I) {
      if (!Threads[I].joinable() || Threads[I].get_id() == Self)
        continue;
      Others = true;
      if (!Left[I])
        continue;
      // Out of its slot under the lock: a concurrent shutdown cannot join
      // it too.
      std::thread T = std::move(Threads[I]);
      // M itself, not Lock, so that the analysis sees it let go and taken
      // again; Lock still holds it when this returns.
      M.unlock();
      T.join();
      M.lock();
      return true;
    }
    if (!Others)
      return false;
    Exited.wait(Lock);
  }
}

void WorkerPool::run(size_t Slot) {
  sync::UniqueLock Lock(M);
  for (;;) {
    Ready.wait(Lock, [this]() REQUIRES(M) { return Stopping || !Queue.empty(); });
    if (Queue.empty())
      break;
    {
      llvm::unique_function<void()> Work = std::move(Queue.front());
      Queue.pop_front();
      Lock.unlock();
      Heartbeat::Busy Working;
      Work();
    }
    Lock.lock();
  }
  Left[Slot] = true;
  Exited.notify_all();
}

} // namespace catalyst::remote::executor
