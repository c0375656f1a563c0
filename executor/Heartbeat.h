//===- Heartbeat.h - Telling the host a busy executor is alive --*- C++ -*-===//
//
// A host that waits for a reply cannot tell a kernel that runs for an hour
// from a connection process that stopped (a hung machine, SIGSTOP, a cable
// cut without a reset). So while this process works on a request (a
// zero-copy kernel on the reader thread, a task on a worker), a thread of
// its own, which never runs kernels, sends the host a heartbeat frame every
// interval the host asked for; a request shorter than the interval costs
// two atomic updates and no frame. The same thread notices a host that has
// gone (one that dropped a launch past its deadline, or died) while a
// kernel runs, and ends this process: a running kernel cannot be
// interrupted, and nobody would read its result.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_HEARTBEAT_H
#define CATALYST_REMOTE_EXECUTOR_HEARTBEAT_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

namespace catalyst::remote::wire {
class SocketTransport;
}

namespace catalyst::remote::executor {

class Heartbeat {
public:
  static Heartbeat &get(); // one per connection process

  void attach(wire::SocketTransport &T) { Transport = &T; }
  // Starts beating every Interval while work is in progress; the host asks
  // for it once, when it opens the session.
  void enable(std::chrono::milliseconds Interval);

  // The executor is stopping this connection (SIGTERM): a closed socket is
  // then its own doing, not the host's. Safe in a signal handler.
  static void noteStopping();

  // Marks work in progress for its lifetime, on any thread.
  class Busy {
  public:
    Busy();
    ~Busy();
    Busy(const Busy &) = delete;
    Busy &operator=(const Busy &) = delete;
  };

private:
  Heartbeat() = default;
  void run(std::chrono::milliseconds Interval);
  bool hostGone() const;

  wire::SocketTransport *Transport = nullptr; // set before the first request
  std::atomic<unsigned> Working{0};
  std::atomic<int64_t> Since{0}; // steady-clock ns when Working last left 0
  std::mutex M;                  // guards Beater
  std::thread Beater;            // lives until the process ends
};

} // namespace catalyst::remote::executor

#endif
