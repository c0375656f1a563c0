//===- WorkerPoolTest.cpp - A connection's long-lived threads, alone ------===//
//
// The executor's dispatcher (executor/WorkerPool.h) with work that is plain
// functions on its real threads: work runs on the pool's threads only, as
// many at once as there are threads, shutdown() runs what is queued and
// joins the threads, and a worker that shuts the pool down (ORC's server
// does when the connection ends under a call) is not waited for by itself.
//
//===----------------------------------------------------------------------===//

#include "../../executor/WorkerPool.h"

#include "../support/Pace.h"
#include "../support/Signals.h"

#include <future>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

using namespace catalyst::remote::executor;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

TEST(WorkerPoolTest, WorkRunsOnThePoolsOwnThreads) {
  // Declared before the pool, which joins its threads before they go.
  Signals Ran;
  std::mutex M;
  std::set<std::thread::id> Threads;
  WorkerPool Pool(3);
  for (int I = 0; I < 30; ++I)
    Pool.dispatch([&] {
      {
        std::lock_guard<std::mutex> Lock(M);
        Threads.insert(std::this_thread::get_id());
      }
      Ran.signal();
    });
  ASSERT_TRUE(Ran.waitFor(30, paced(5s)));
  std::lock_guard<std::mutex> Lock(M);
  EXPECT_LE(Threads.size(), 3u);
  EXPECT_EQ(Threads.count(std::this_thread::get_id()), 0u);
}

// A kernel that runs for long holds one thread; the others serve the rest.
TEST(WorkerPoolTest, AsManyRunAtOnceAsThereAreThreads) {
  Signals Started, Release;
  WorkerPool Pool(3);
  for (int I = 0; I < 3; ++I)
    Pool.dispatch([&] {
      Started.signal();
      Release.waitFor(1, paced(10s));
    });
  EXPECT_TRUE(Started.waitFor(3, paced(5s))) << Started.count() << " of 3 work items started";
  Release.signal();
}

TEST(WorkerPoolTest, ShutdownRunsWhatIsQueuedThenJoins) {
  Signals Started, Release, Ran;
  WorkerPool Pool(1);
  Pool.dispatch([&] {
    Started.signal();
    Release.waitFor(1, paced(10s));
    Ran.signal();
  });
  ASSERT_TRUE(Started.waitFor(1, paced(5s)));
  for (int I = 0; I < 5; ++I)
    Pool.dispatch([&] { Ran.signal(); });
  auto Stopped = std::async(std::launch::async, [&] { Pool.shutdown(); });
  // The first work holds the only worker, so shutdown() cannot return yet
  // and none of the queued work can have run. This cannot fail on a slow
  // machine, only miss a bug when the async thread starts late.
  EXPECT_EQ(Stopped.wait_for(100ms), std::future_status::timeout);
  EXPECT_EQ(Ran.count(), 0u);
  Release.signal();
  ASSERT_EQ(Stopped.wait_for(paced(10s)), std::future_status::ready);
  EXPECT_EQ(Ran.count(), 6u);
  // A second shutdown, as the destructor makes, has nothing left to do.
  Pool.shutdown();
}

// shutdown() on a worker joins every other worker, returns, and leaves the
// caller's own thread to the destructor.
TEST(WorkerPoolTest, ShutdownOnAWorkerJoinsTheOthersButNotItself) {
  auto Pool = std::make_unique<WorkerPool>(3);
  Signals Returned;
  Pool->dispatch([&] {
    Pool->shutdown();
    Returned.signal();
  });
  ASSERT_TRUE(Returned.waitFor(1, paced(5s))) << "shutdown() on a worker did not return";
  auto Destroyed = std::async(std::launch::async, [&] { Pool.reset(); });
  EXPECT_EQ(Destroyed.wait_for(paced(5s)), std::future_status::ready);
}

} // namespace
