//===- SessionTrace.h - What one session writes to its trace ----*- C++ -*-===//
//
// A traced session writes its opening (or, for a trace started on a session
// already open, that start), links, asset sends, launches and closing as
// spans on the host thread that made each call, and each launch's executor
// phases on the executor's connection process (its real process id, from
// the executor's clock service), mapped onto the host's clock (ClockMap.h).
// Events are written when the call they describe ends, failed or not.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRACE_SESSIONTRACE_H
#define CATALYST_REMOTE_TRACE_SESSIONTRACE_H

#include "../transfer/LaunchTimeline.h"
#include "ClockMap.h"
#include "TraceEvents.h"
#include "TraceFile.h"
#include "catalyst/remote/SessionOptions.h"
#include "catalyst/remote/Stats.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

#include <memory>
#include <optional>
#include <string>

namespace catalyst::remote {

// When the steps of opening a session ended; unset ones were not reached.
struct OpenMarks {
  PhaseClock::time_point Start, Connected, SetUp, Synced;
};

// One launch as a trace shows it.
struct TracedLaunch {
  llvm::StringRef Entry, Object;
  remote::Strategy Strategy;
  TransportKind Over;
  const LaunchStats &Stats;
  const LaunchTimeline &When;
  size_t Inputs, Outputs;
  uint64_t InputBytes, OutputBytes;
  llvm::StringRef Error; // empty when it succeeded
  uint64_t Number;       // its place among the session's launches, from 1
  uint64_t ResidentInputs = 0, KeptOutputs = 0;
};

// One upload, fetch or release of a resident (Resident.h).
struct TracedResident {
  llvm::StringRef Call; // "upload", "fetch" or "release"
  uint64_t Id;          // 0 when the call failed before it had one
  uint64_t Bytes;       // the tensor's
  const LaunchStats &Stats;
  PhaseClock::time_point Start;
  llvm::StringRef Error; // empty when it succeeded
};

// Threads: the session's calls, on their callers' threads, each holding
// the trace through the session's TraceSlot: launched() and residentCall()
// under the session's LaunchMutex, binarySent() under no lock of the session's, so
// two may run at once; what they write goes through File, which locks its
// own. syncClock() runs before the trace is published (TraceSlot), and is
// the only writer of the members: after it they are only read. opened(),
// started() and closed() run on the thread that opens, starts or closes
// the session.
class SessionTrace {
public:
  static llvm::Expected<std::unique_ptr<SessionTrace>> create(llvm::StringRef Path,
                                                              llvm::StringRef Address);

  // Reads the executor's clock a few times (wire::ClockName). Without that
  // service (an upstream executor), or with readings that make no sense,
  // the trace has no executor spans and the open span says why.
  void syncClock(llvm::orc::ExecutorProcessControl &EPC);

  void opened(const OpenMarks &Marks, Strategy Transfer, llvm::StringRef Error);
  // The trace began on a session already open, at Start; the clock was
  // read since (syncClock).
  void started(PhaseClock::time_point Start, Strategy Transfer);
  void launched(const TracedLaunch &L);
  void residentCall(const TracedResident &R);
  // Kind is "link" (an object) or "asset".
  void binarySent(llvm::StringRef Kind, llvm::StringRef Path, PhaseClock::time_point Start,
                  llvm::StringRef Error);
  void closed(PhaseClock::time_point Start, llvm::StringRef Error);

  const std::string &path() const { return File->path(); }

private:
  SessionTrace(std::shared_ptr<TraceFile> File, std::string Address);
  // What the open (or started) span says of the session and its executor.
  void describeSession(TraceArgs &J, Strategy Transfer) const;
  TraceTrack hostTrack(TraceEvents &E);
  TraceTrack executorTrack(TraceEvents &E);
  void hostPhases(TraceEvents &E, TraceTrack Host, const TracedLaunch &L);
  // Draws L's executor phases, or returns why it cannot.
  const char *executorPhases(TraceEvents &E, const TracedLaunch &L, uint64_t Number);

  std::shared_ptr<TraceFile> File; // locks its own (TraceFile.h)
  const std::string Address;
  const uint64_t HostPid;
  // Set by syncClock, before any other thread sees the trace (a session
  // publishes it through a TraceSlot, under its mutex).
  std::optional<ClockMap> Clock;
  uint64_t ExecutorPid = 0;
  std::string NoClock = "not read"; // why Clock is unset
};

// The message of Err, which is left as it was (still to be handled).
std::string messageOf(llvm::Error &Err);

} // namespace catalyst::remote

#endif
