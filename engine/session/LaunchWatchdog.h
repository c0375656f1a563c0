//===- LaunchWatchdog.h - Ending a launch past its deadline -----*- C++ -*-===//
//
// A kernel cannot be interrupted from the host, so a launch past its
// deadline ends the only way it can: the watchdog calls Expire, which closes
// the connection, and the waiting launch fails (the executor's connection
// process notices the host gone and exits). One thread per session, started
// by the first launch that has a deadline.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_LAUNCHWATCHDOG_H
#define CATALYST_REMOTE_SESSION_LAUNCHWATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
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
  void run();

  const std::function<void()> Expire;
  std::mutex M;
  std::condition_variable Changed;
  std::optional<Clock::time_point> Armed; // guarded by M
  bool Stopping = false;                  // guarded by M
  std::thread Watcher;                    // started under M by the first arm()
};

} // namespace catalyst::remote

#endif
