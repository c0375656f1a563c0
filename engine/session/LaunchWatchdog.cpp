//===- LaunchWatchdog.cpp - Ending a launch past its deadline -------------===//

#include "LaunchWatchdog.h"

namespace catalyst::remote {

LaunchWatchdog::~LaunchWatchdog() {
  {
    sync::MutexLock Lock(M);
    Stopping = true;
  }
  Changed.notify_all();
  if (Watcher.joinable())
    Watcher.join();
}

void LaunchWatchdog::arm(Clock::time_point Deadline) {
  sync::MutexLock Lock(M);
  Armed = Deadline;
  if (!Watcher.joinable())
    Watcher = std::thread([this] { run(); });
  Changed.notify_all();
}

void LaunchWatchdog::disarm() {
  sync::MutexLock Lock(M);
  Armed.reset();
}

void LaunchWatchdog::run() {
  sync::UniqueLock Lock(M);
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
