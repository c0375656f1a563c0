//===- WorkerPool.cpp - Long-lived threads serving one connection ---------===//

#include "WorkerPool.h"

#include "CrashReporter.h"
#include "Heartbeat.h"

namespace catalyst::remote::executor {

WorkerPool::WorkerPool(unsigned N) {
  for (unsigned I = 0; I < N; ++I)
    Threads.emplace_back([this] {
      prepareThreadForCrashes();
      run();
    });
}

WorkerPool::~WorkerPool() {
  shutdown();
}

void WorkerPool::dispatch(llvm::unique_function<void()> Work) {
  {
    std::lock_guard<std::mutex> Lock(M);
    Queue.push_back(std::move(Work));
  }
  Ready.notify_one();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard<std::mutex> Lock(M);
    Stopping = true;
  }
  Ready.notify_all();
  for (auto &T : Threads)
    if (T.joinable() && T.get_id() != std::this_thread::get_id())
      T.join();
}

void WorkerPool::run() {
  for (;;) {
    llvm::unique_function<void()> Work;
    {
      std::unique_lock<std::mutex> Lock(M);
      Ready.wait(Lock, [this] { return Stopping || !Queue.empty(); });
      if (Queue.empty())
        return;
      Work = std::move(Queue.front());
      Queue.pop_front();
    }
    Heartbeat::Busy Working;
    Work();
  }
}

} // namespace catalyst::remote::executor
