//===- Progress.h - A progress bar for a launch that takes a while -*- C++ -*-===//
//
// While a launch runs, a thread reads how many bytes the session has moved
// (Session::traffic) every 100 ms. Once the launch has taken a second and
// moves more than 64 MiB, it draws one line on stderr, rewritten in place,
// and erases it when the launch ends. Only on a terminal: a log or a pipe
// gets nothing.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_PROGRESS_H
#define CATALYST_REMOTE_CLI_PROGRESS_H

#include "catalyst/remote/Session.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace catalyst::remote::cli {

// Shows one launch's progress from construction to destruction.
class LaunchProgress {
public:
  // InputBytes go out; OutputBytes come back, when known (0 when not: a
  // first launch cannot know its outputs' shapes).
  LaunchProgress(const Session &S, uint64_t InputBytes, uint64_t OutputBytes);
  ~LaunchProgress();
  LaunchProgress(const LaunchProgress &) = delete;
  LaunchProgress &operator=(const LaunchProgress &) = delete;

private:
  void watch();

  const Session &S;
  const uint64_t InputBytes, OutputBytes;
  const Traffic Start;
  const std::chrono::steady_clock::time_point Began;
  std::mutex M;
  std::condition_variable Wake;
  bool Done = false;   // under M, set by the destructor
  std::thread Watcher; // only on a terminal; it alone writes stderr meanwhile
};

} // namespace catalyst::remote::cli

#endif
