//===- TaskPoolTest.cpp - The host's ORC tasks on kept threads, alone -----===//
//
// The task dispatcher (session/TaskPool.h) with ORC tasks that are plain
// functions: every task runs, a task may wait for one dispatched after it
// (so a task never waits for a thread), threads are kept once started,
// waitIdle() and idleSince() tell an idle pool from one that ran something
// since, and shutdown() runs what is queued and then runs late tasks in
// place.
//
//===----------------------------------------------------------------------===//

#include "session/TaskPool.h"

#include "Pace.h"
#include "Signals.h"

#include <atomic>
#include <future>
#include <gtest/gtest.h>
#include <thread>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

template <class Fn> void dispatch(TaskPool &Pool, Fn &&F) {
  Pool.dispatch(llvm::orc::makeGenericNamedTask(std::forward<Fn>(F), "test task"));
}

TEST(TaskPoolTest, RunsEveryTaskAndWaitIdleCountsThem) {
  TaskPool Pool;
  std::atomic<int> Ran{0};
  for (int I = 0; I < 50; ++I)
    dispatch(Pool, [&] { ++Ran; });
  EXPECT_EQ(Pool.waitIdle(), 50u);
  EXPECT_EQ(Ran.load(), 50);
  Pool.shutdown();
}

// A task that blocks until a later task runs: with a fixed set of busy
// threads it would wait for ever, here another thread starts.
TEST(TaskPoolTest, ATaskMayWaitForOneDispatchedAfterIt) {
  TaskPool Pool;
  Signals FirstStarted, SecondRan, FirstDone;
  bool SawSecond = false;
  dispatch(Pool, [&] {
    FirstStarted.signal();
    SawSecond = SecondRan.waitFor(1, paced(10s));
    FirstDone.signal();
  });
  ASSERT_TRUE(FirstStarted.waitFor(1, paced(5s)));
  dispatch(Pool, [&] { SecondRan.signal(); });
  ASSERT_TRUE(FirstDone.waitFor(1, paced(20s)));
  EXPECT_TRUE(SawSecond) << "the second task did not run while the first one waited for it";
  EXPECT_EQ(Pool.waitIdle(), 2u);
}

TEST(TaskPoolTest, AThreadOnceStartedIsKeptForTheNextTask) {
  TaskPool Pool;
  std::thread::id First, Second;
  dispatch(Pool, [&] { First = std::this_thread::get_id(); });
  Pool.waitIdle();
  dispatch(Pool, [&] { Second = std::this_thread::get_id(); });
  Pool.waitIdle();
  EXPECT_NE(First, std::this_thread::get_id());
  EXPECT_EQ(First, Second);
}

TEST(TaskPoolTest, IdleSinceTellsWhetherAnythingRanSinceWaitIdle) {
  TaskPool Pool;
  uint64_t Finished = Pool.waitIdle();
  EXPECT_EQ(Finished, 0u);
  EXPECT_TRUE(Pool.idleSince(Finished));

  Signals Started, Release;
  dispatch(Pool, [&] {
    Started.signal();
    Release.waitFor(1, paced(10s));
  });
  ASSERT_TRUE(Started.waitFor(1, paced(5s)));
  EXPECT_FALSE(Pool.idleSince(Finished)) << "a task is running";
  Release.signal();
  uint64_t After = Pool.waitIdle();
  EXPECT_EQ(After, 1u);
  EXPECT_FALSE(Pool.idleSince(Finished)) << "a task ran since";
  EXPECT_TRUE(Pool.idleSince(After));
}

TEST(TaskPoolTest, ShutdownRunsWhatIsQueuedThenRunsLateTasksInPlace) {
  TaskPool Pool;
  Signals Started, Release, Ran;
  dispatch(Pool, [&] {
    Started.signal();
    Release.waitFor(1, paced(10s));
    Ran.signal();
  });
  ASSERT_TRUE(Started.waitFor(1, paced(5s)));
  for (int I = 0; I < 5; ++I)
    dispatch(Pool, [&] { Ran.signal(); });
  auto Stopped = std::async(std::launch::async, [&] { Pool.shutdown(); });
  Release.signal();
  ASSERT_EQ(Stopped.wait_for(paced(10s)), std::future_status::ready);
  EXPECT_EQ(Ran.count(), 6u);

  std::thread::id Late;
  dispatch(Pool, [&] { Late = std::this_thread::get_id(); });
  EXPECT_EQ(Late, std::this_thread::get_id());
}

// ORC may shut the dispatcher down from one of its own tasks (a task that
// ends the session): that thread cannot join itself, and is left to finish.
TEST(TaskPoolTest, ShutdownFromATaskDoesNotWaitForItself) {
  auto Pool = std::make_unique<TaskPool>();
  Signals Returned;
  dispatch(*Pool, [&] {
    Pool->shutdown();
    Returned.signal();
  });
  ASSERT_TRUE(Returned.waitFor(1, paced(5s)));
  // The detached thread still touches the pool after the task: wait until
  // it has left before the pool goes.
  Pool->waitIdle();
}

} // namespace
