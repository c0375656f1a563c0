//===- RefusalLog.h - Refused peers, logged at a bounded rate ---*- C++ -*-===//
//
// A flood of peers that never authenticate must not flood the log. The
// listener notes each peer it drops here; the first of an interval is
// logged at once, in full (one misconfigured host shows up right away, with
// its reason), and the rest become one summary line when the interval ends:
//
//   catalyst-remote-executor: refused 6912 peers in the last 10 s: 6900
//   left before authenticating, 12 over budget; most from 127.0.0.7 (40),
//   127.0.0.9 (38), ...
//
// Not thread-safe: the listener's thread owns it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_REFUSALLOG_H
#define CATALYST_REMOTE_EXECUTOR_REFUSALLOG_H

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace catalyst::remote::executor {

class RefusalLog {
public:
  using Clock = std::chrono::steady_clock;

  enum class Kind {
    Left,         // closed the connection before authenticating
    Silent,       // did not authenticate (or speak) before its deadline
    Malformed,    // sent something other than the handshake
    WrongProof,   // does not know the secret
    OverBudget,   // dropped: too many peers not yet authenticated
    AtCapacity,   // dropped: --max-connections sessions already
    OtherUser,    // another user, on a socket file
    Other,        // a failure of this executor's own (fork, random numbers)
    WireMismatch, // knew the secret, wanted other wire protection (--wire)
  };
  static constexpr size_t Kinds = 9;

  // The first interval begins at Start. Times are passed in (now, unless
  // a test says otherwise) so that a test can step through intervals.
  explicit RefusalLog(std::chrono::milliseconds Interval = std::chrono::seconds(10),
                      Clock::time_point Start = Clock::now())
      : Interval(Interval), Began(Start) {}

  // Notes a refused peer from Source (an address without its port). The
  // first refusal of an interval is logged at once as Line.
  void note(Kind K, const std::string &Source, const std::string &Line,
            Clock::time_point Now = Clock::now());
  // Logs the summary once the interval is over; when the next is due.
  Clock::time_point flush(Clock::time_point Now = Clock::now());

  // Sources the summary names, at most.
  static constexpr size_t TopSources = 5;
  // Sources counted in one interval, at most: beyond, they count as one.
  static constexpr size_t MaxSources = 4096;

private:
  std::chrono::milliseconds Interval;
  Clock::time_point Began;
  bool LoggedOne = false;
  uint64_t Unlogged = 0;
  std::array<uint64_t, Kinds> Counts{};
  std::map<std::string, uint64_t> BySource;
};

} // namespace catalyst::remote::executor

#endif
