//===- LaunchWatchdogTest.cpp - A launch's deadline, alone ----------------===//
//
// The watchdog (session/LaunchWatchdog.h) with an Expire that counts: an
// armed deadline fires once and not before its time, a disarmed one never
// fires, arming again moves the deadline (nearer included), Expire may arm
// or disarm from the watchdog's own thread, and destroying an armed
// watchdog returns at once without firing. KernelDeathTest and LivenessTest
// see it end real launches.
//
//===----------------------------------------------------------------------===//

#include "session/LaunchWatchdog.h"

#include "Pace.h"
#include "Signals.h"

#include <gtest/gtest.h>
#include <memory>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;
using Clock = LaunchWatchdog::Clock;

namespace {

TEST(LaunchWatchdogTest, AnArmedDeadlineFiresOnceNotBeforeItsTime) {
  Signals Expired;
  Clock::time_point FiredAt;
  LaunchWatchdog W([&] {
    FiredAt = Clock::now();
    Expired.signal();
  });
  auto Deadline = Clock::now() + 100ms;
  W.arm(Deadline);
  ASSERT_TRUE(Expired.waitFor(1, paced(5s)));
  EXPECT_GE(FiredAt, Deadline);
  // Once: the deadline that fired is no longer armed.
  EXPECT_FALSE(Expired.waitFor(2, paced(300ms)));
}

TEST(LaunchWatchdogTest, ADisarmedDeadlineNeverFires) {
  Signals Expired;
  LaunchWatchdog W([&] { Expired.signal(); });
  W.arm(Clock::now() + 50ms);
  W.disarm();
  // Well past the deadline, the watchdog's thread has woken for it.
  EXPECT_FALSE(Expired.waitFor(1, paced(500ms)));
}

// The watchdog's thread sleeps while nothing is armed, or until the armed
// deadline: arming must wake it, or the next launch (the first one expired
// here, which leaves the thread asleep) would run on past its deadline.
TEST(LaunchWatchdogTest, ArmingWakesTheSleepingWatchdog) {
  Signals Expired;
  LaunchWatchdog W([&] { Expired.signal(); });
  W.arm(Clock::now() + 10ms);
  ASSERT_TRUE(Expired.waitFor(1, paced(5s)));
  W.arm(Clock::now() + 1h);
  auto Near = Clock::now() + 50ms;
  W.arm(Near);
  ASSERT_TRUE(Expired.waitFor(2, paced(5s))) << "the nearer deadline did not fire";
  EXPECT_GE(Clock::now(), Near);
}

TEST(LaunchWatchdogTest, ArmingALaterDeadlineReplacesTheNearerOne) {
  Signals Expired;
  Clock::time_point FiredAt;
  LaunchWatchdog W([&] {
    FiredAt = Clock::now();
    Expired.signal();
  });
  W.arm(Clock::now() + 50ms);
  auto Later = Clock::now() + 300ms;
  W.arm(Later);
  ASSERT_TRUE(Expired.waitFor(1, paced(5s)));
  EXPECT_GE(FiredAt, Later);
}

// Expire runs outside the watchdog's lock: it may disarm (a launch woken
// by the closed connection does) and arm the next launch's deadline.
TEST(LaunchWatchdogTest, ExpireMayArmAndDisarmFromTheWatchdogsThread) {
  Signals Expired;
  std::unique_ptr<LaunchWatchdog> W;
  W = std::make_unique<LaunchWatchdog>([&] {
    W->disarm();
    if (Expired.count() == 0)
      W->arm(Clock::now() + 20ms);
    Expired.signal();
  });
  W->arm(Clock::now() + 20ms);
  ASSERT_TRUE(Expired.waitFor(2, paced(5s)));
  EXPECT_FALSE(Expired.waitFor(3, paced(200ms)));
}

TEST(LaunchWatchdogTest, DestroyingAnArmedWatchdogReturnsAtOnceWithoutFiring) {
  Signals Expired;
  auto W = std::make_unique<LaunchWatchdog>([&] { Expired.signal(); });
  W->arm(Clock::now() + 1h);
  auto Start = Clock::now();
  W.reset();
  EXPECT_LT(Clock::now() - Start, paced(2s));
  EXPECT_EQ(Expired.count(), 0u);
  // Never armed: no thread to join.
  LaunchWatchdog Idle([&] { Expired.signal(); });
}

} // namespace
