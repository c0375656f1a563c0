//===- Signals.h - Events a test waits for, with a deadline ------*- C++ -*-===//
//
// A count of events that other threads signal (a job started, a deadline
// fired), which a test waits on for a bounded time rather than sleeping and
// assuming: the wait ends as soon as the event happened, and fails, instead
// of hanging, when it never does.
//
//   Signals Started;
//   Pool.dispatch([&] { Started.signal(); ... });
//   ASSERT_TRUE(Started.waitFor(1, paced(5s)));
//
// Thread-safe: every member may be called from any thread; M guards Count.
// Header-only, so that the unit test binaries that do not link the test
// support library can use it too.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_SIGNALS_H
#define CATALYST_REMOTE_TESTS_SIGNALS_H

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace catalyst::remote::test {

class Signals {
public:
  // Notifies under M: a waiter that saw the count cannot return, and
  // destroy this, while the notification is still being made.
  void signal() {
    std::lock_guard<std::mutex> Lock(M);
    ++Count;
    Changed.notify_all();
  }

  size_t count() {
    std::lock_guard<std::mutex> Lock(M);
    return Count;
  }

  // True once at least N signals came, within Limit; false when Limit
  // passed first.
  template <class Rep, class Period>
  bool waitFor(size_t N, std::chrono::duration<Rep, Period> Limit) {
    std::unique_lock<std::mutex> Lock(M);
    return Changed.wait_for(Lock, Limit, [&] { return Count >= N; });
  }

private:
  std::mutex M;
  std::condition_variable Changed;
  size_t Count = 0; // guarded by M
};

} // namespace catalyst::remote::test

#endif
