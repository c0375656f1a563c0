//===- LaunchWatchdog.h - Ending a launch past its deadline -----*- C++ -*-===//
//
// A kernel cannot be interrupted from the host, so a launch past its
// deadline ends the only way it can: the watchdog calls Expire, which closes
// the connection, and the waiting launch fails (the executor's connection
// process notices the host gone and exits). One thread per session, started
// by the first launch that has a deadline.
//
// Threads: arm() and disarm() on the launching thread (under the session's
// LaunchMutex); the watchdog's thread runs run() and Expire; the
// destructor at the session's teardown.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_LAUNCHWATCHDOG_H
#define CATALYST_REMOTE_SESSION_LAUNCHWATCHDOG_H

#include "sync/Mutex.h"

#include <chrono>
#include <functional>
#include <optional>
#include <thread>

namespace catalyst::remote {

class LaunchWatchdog {
public:
  using Clock = std::chrono::steady_clock;

  // Expire runs on the watchdog's thread when an armed deadline passes.
  explicit LaunchWatchdog(std::function<void()> Expire) : Expire(std::move(Expire)) {}
  ~LaunchWatchdog();
  LaunchWatchdog(const LaunchWatchdog &) = delete;
  LaunchWatchdog &operator=(const LaunchWatchdog &) = delete;

  // Watches the launch that starts now, until disarm().
  void arm(Clock::time_point Deadline);
  void disarm();

private:
  void run() EXCLUDES(M);

  const std::function<void()> Expire;
  sync::Mutex M;
  sync::CondVar Changed; // with M: Armed or Stopping changed
  std::optional<Clock::time_point> Armed GUARDED_BY(M);
  bool Stopping GUARDED_BY(M) = false;
  std::thread Watcher GUARDED_BY(M); // started by the first arm()
};

} // namespace catalyst::remote

#endif
