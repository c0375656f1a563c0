//===- LaunchWatchdog.cpp - Ending a launch past its deadline -------------===//

#include "LaunchWatchdog.h"

namespace catalyst::remote {

LaunchWatchdog::~LaunchWatchdog() {
  {
    std::lock_guard<std::mutex> Lock(M);
    Stopping = true;
  }
  Changed.notify_all();
  if (Watcher.joinable())
    Watcher.join();
}

void LaunchWatchdog::arm(Clock::time_point Deadline) {
  std::lock_guard<std::mutex> Lock(M);
  Armed = Deadline;
  if (!Watcher.joinable())
    Watcher = std::thread([this] { run(); });
  Changed.notify_all();
}

void LaunchWatchdog::disarm() {
  std::lock_guard<std::mutex> Lock(M);
  Armed.reset();
}

void LaunchWatchdog::run() {
  std::unique_lock<std::mutex> Lock(M);
  while (!Stopping) {
    if (!Armed) {
      Changed.wait(Lock);
      continue;
    }
    if (Clock::now() < *Armed) {
      Changed.wait_until(Lock, *Armed);
      continue;
    }
    Armed.reset();
    // Outside the lock: Expire closes a connection, which may wake the
    // launching thread, which disarms.
    Lock.unlock();
    Expire();
    Lock.lock();
  }
}

} // namespace catalyst::remote
