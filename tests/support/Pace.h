//===- Pace.h - Fault bounds at the pace of this build ----------*- C++ -*-===//
//
// A few tests bound how long the executor may take to do something that is
// itself timed by the executor (a handshake timeout, forking a process per
// peer). Under ThreadSanitizer every process runs several times slower, so
// those timeouts and bounds are scaled by Pace rather than the tests skipped.
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

} // namespace catalyst::remote::test

#endif
