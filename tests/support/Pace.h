//===- Pace.h - Fault bounds at the pace of this build ----------*- C++ -*-===//
//
// A few tests bound how long the executor may take to do something that is
// itself timed by the executor (a handshake timeout, forking a process per
// peer). Under ThreadSanitizer every process runs several times slower, so
// those timeouts and bounds are scaled by Pace rather than the tests skipped.
// hangBound() is the bound on a wait that a deadline ends.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_PACE_H
#define CATALYST_REMOTE_TESTS_PACE_H

#include <chrono>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CATALYST_REMOTE_TEST_TSAN 1
#elif __has_feature(address_sanitizer)
#define CATALYST_REMOTE_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CATALYST_REMOTE_TEST_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define CATALYST_REMOTE_TEST_ASAN 1
#endif

namespace catalyst::remote::test {

#if defined(CATALYST_REMOTE_TEST_TSAN)
inline constexpr int Pace = 8;
#elif defined(CATALYST_REMOTE_TEST_ASAN)
inline constexpr int Pace = 2;
#else
inline constexpr int Pace = 1;
#endif

template <class Rep, class Period>
constexpr std::chrono::duration<Rep, Period> paced(std::chrono::duration<Rep, Period> D) {
  return D * Pace;
}

// The bound a test puts on a wait that its own deadline (Deadline) ends:
// what is tested is that the wait ends rather than hangs, not how fast, and
// a loaded machine can hold a process back for seconds. How fast belongs in
// a benchmark.
template <class Rep, class Period>
constexpr std::chrono::milliseconds hangBound(std::chrono::duration<Rep, Period> Deadline) {
  return paced(std::chrono::duration_cast<std::chrono::milliseconds>(Deadline) +
               std::chrono::milliseconds(10000));
}

} // namespace catalyst::remote::test

#endif
