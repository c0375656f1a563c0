//===- LaunchQueueTest.cpp - A session's background launches, alone -------===//
//
// The queue of asynchronous launches (session/LaunchQueue.h) with jobs that
// are plain functions on its real thread: they run in the order submitted,
// each result reaches the one who awaits its ticket, once, and drain() waits
// for every job and hands back the errors nobody awaited.
//
//===----------------------------------------------------------------------===//

#include "session/LaunchQueue.h"

#include "Pace.h"
#include "Signals.h"

#include <future>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;
using namespace llvm;

namespace {

Error failure(const std::string &What) {
  return createStringError(inconvertibleErrorCode(), What);
}

// The message of Err, or "success".
std::string said(Error Err) {
  return Err ? toString(std::move(Err)) : "success";
}

TEST(LaunchQueueTest, JobsRunInSubmissionOrderOnOneThreadOfTheirOwn) {
  LaunchQueue Q;
  std::mutex M;
  std::vector<int> Order;
  std::vector<std::thread::id> Ran;
  std::vector<uint64_t> Tickets;
  for (int I = 0; I < 20; ++I)
    Tickets.push_back(Q.submit([&, I] {
      std::lock_guard<std::mutex> Lock(M);
      Order.push_back(I);
      Ran.push_back(std::this_thread::get_id());
      return Error::success();
    }));
  for (uint64_t T : Tickets)
    EXPECT_EQ(said(Q.await(T)), "success");
  std::lock_guard<std::mutex> Lock(M);
  ASSERT_EQ(Order.size(), 20u);
  for (int I = 0; I < 20; ++I)
    EXPECT_EQ(Order[I], I);
  for (auto Id : Ran) {
    EXPECT_EQ(Id, Ran.front());
    EXPECT_NE(Id, std::this_thread::get_id());
  }
}

TEST(LaunchQueueTest, EachAwaitGetsItsOwnJobsResult) {
  LaunchQueue Q;
  std::vector<uint64_t> Tickets;
  for (int I = 0; I < 6; ++I)
    Tickets.push_back(
        Q.submit([I] { return I % 2 ? failure("job " + std::to_string(I)) : Error::success(); }));
  // Awaited out of order, after they finished or while they run.
  for (int I = 5; I >= 0; --I)
    EXPECT_EQ(said(Q.await(Tickets[I])), I % 2 ? "job " + std::to_string(I) : "success");
  EXPECT_EQ(said(Q.drain()), "success");
}

TEST(LaunchQueueTest, ATicketIsAwaitedOnceAndUnknownTicketsAreRefused) {
  LaunchQueue Q;
  uint64_t T = Q.submit([] { return failure("the launch failed"); });
  EXPECT_EQ(said(Q.await(T)), "the launch failed");
  std::string Again = said(Q.await(T));
  EXPECT_NE(Again.find("no pending launch " + std::to_string(T)), std::string::npos) << Again;
  std::string Unknown = said(Q.await(T + 100));
  EXPECT_NE(Unknown.find("no pending launch"), std::string::npos) << Unknown;
  // Neither refusal is left over for drain().
  EXPECT_EQ(said(Q.drain()), "success");
}

TEST(LaunchQueueTest, AnAwaitOnAnotherThreadWaitsForTheRunningJob) {
  LaunchQueue Q;
  Signals Started, Release;
  uint64_t T = Q.submit([&] {
    Started.signal();
    return Release.waitFor(1, paced(10s)) ? failure("released") : failure("never released");
  });
  ASSERT_TRUE(Started.waitFor(1, paced(5s)));
  auto Awaited = std::async(std::launch::async, [&] { return said(Q.await(T)); });
  Release.signal();
  ASSERT_EQ(Awaited.wait_for(paced(5s)), std::future_status::ready);
  EXPECT_EQ(Awaited.get(), "released");
}

// drain() returns once the job held on Release and the one queued behind it
// have both run, with both their errors: nobody awaited either.
TEST(LaunchQueueTest, DrainWaitsForEveryJobAndReturnsTheUnawaitedErrors) {
  LaunchQueue Q;
  Signals Started, Release, Ran;
  uint64_t Awaited = Q.submit([] { return failure("awaited"); });
  EXPECT_EQ(said(Q.await(Awaited)), "awaited");
  Q.submit([&] {
    Started.signal();
    bool Released = Release.waitFor(1, paced(10s));
    Ran.signal();
    return failure(Released ? "first" : "first, never released");
  });
  Q.submit([&] {
    Ran.signal();
    return failure("second");
  });
  ASSERT_TRUE(Started.waitFor(1, paced(5s)));
  auto Drained = std::async(std::launch::async, [&] { return said(Q.drain()); });
  Release.signal();
  ASSERT_EQ(Drained.wait_for(paced(10s)), std::future_status::ready);
  std::string Unclaimed = Drained.get();
  EXPECT_EQ(Ran.count(), 2u);
  EXPECT_NE(Unclaimed.find("first"), std::string::npos) << Unclaimed;
  EXPECT_NE(Unclaimed.find("second"), std::string::npos) << Unclaimed;
  EXPECT_EQ(Unclaimed.find("never released"), std::string::npos) << Unclaimed;
  EXPECT_EQ(Unclaimed.find("awaited"), std::string::npos) << Unclaimed;
}

TEST(LaunchQueueTest, ASubmitAfterDrainStartsTheThreadAgain) {
  LaunchQueue Q;
  EXPECT_EQ(said(Q.await(Q.submit([] { return Error::success(); }))), "success");
  EXPECT_EQ(said(Q.drain()), "success");
  EXPECT_EQ(said(Q.await(Q.submit([] { return failure("after the drain"); }))), "after the drain");
  EXPECT_EQ(said(Q.drain()), "success");
  // Draining an idle queue, or one never started, returns at once.
  EXPECT_EQ(said(Q.drain()), "success");
  LaunchQueue Unused;
  EXPECT_EQ(said(Unused.drain()), "success");
}

// The destructor drains: the job runs, and its error, which nobody awaits,
// is consumed (an unchecked llvm::Error would abort in a checking build).
TEST(LaunchQueueTest, DestroyingTheQueueRunsWhatWasSubmitted) {
  Signals Ran;
  {
    LaunchQueue Q;
    for (int I = 0; I < 3; ++I)
      Q.submit([&] {
        Ran.signal();
        return failure("nobody awaits this");
      });
  }
  EXPECT_EQ(Ran.count(), 3u);
}

} // namespace
