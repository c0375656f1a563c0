//===- SessionTrace.cpp - What one session writes to its trace ------------===//

#include "SessionTrace.h"

#include "../transfer/CheckedCall.h"
#include "wire/Protocol.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <pthread.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

namespace {

// Readings of the executor's clock at open; the best of them counts.
constexpr int ClockSamples = 8;

uint64_t ns(PhaseClock::time_point T) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(T.time_since_epoch()).count();
}

uint64_t thisThread() {
  static thread_local uint64_t Tid = ::gettid();
  return Tid;
}

std::string threadLabel() {
  char Name[64] = {};
  if (::pthread_getname_np(::pthread_self(), Name, sizeof(Name)) != 0 || !Name[0])
    return "thread " + std::to_string(thisThread());
  return Name;
}

Expected<ClockSample> readClock(ExecutorProcessControl &EPC, ExecutorAddr Fn, uint64_t &Pid) {
  std::tuple<uint64_t, uint64_t> Reading;
  uint64_t Before = ns(PhaseClock::now());
  if (auto Err = callChecked<wire::SPSClockSig>(EPC, Fn, wire::ClockName, Reading))
    return Err;
  uint64_t After = ns(PhaseClock::now());
  Pid = std::get<1>(Reading);
  return ClockSample{Before, std::get<0>(Reading), After};
}

} // namespace

std::string messageOf(Error &Err) {
  std::string Text;
  Err = handleErrors(std::move(Err), [&](std::unique_ptr<ErrorInfoBase> E) {
    Text += (Text.empty() ? "" : "; ") + E->message();
    return Error(std::move(E));
  });
  return Text;
}

SessionTrace::SessionTrace(std::shared_ptr<TraceFile> File, std::string Address)
    : File(std::move(File)), Address(std::move(Address)), HostPid(::getpid()) {}

Expected<std::unique_ptr<SessionTrace>> SessionTrace::create(StringRef Path, StringRef Address) {
  auto F = TraceFile::get(Path);
  if (!F)
    return F.takeError();
  return std::unique_ptr<SessionTrace>(new SessionTrace(std::move(*F), Address.str()));
}

void SessionTrace::syncClock(ExecutorProcessControl &EPC) {
  auto It = EPC.getBootstrapSymbolsMap().find(wire::ClockName);
  if (It == EPC.getBootstrapSymbolsMap().end()) {
    NoClock = "the executor has no clock service";
    return;
  }
  std::vector<ClockSample> Samples;
  uint64_t Pid = 0;
  for (int I = 0; I < ClockSamples; ++I) {
    uint64_t ThisPid = 0;
    auto S = readClock(EPC, It->second, ThisPid);
    if (!S) {
      NoClock = "reading the executor's clock failed: " + toString(S.takeError());
      return;
    }
    // One process answers every reading; a pid that changes is no pid.
    if (ThisPid == 0 || ThisPid > uint64_t(INT32_MAX) || (Pid && ThisPid != Pid)) {
      NoClock = "the executor named no valid process id";
      return;
    }
    Pid = ThisPid;
    Samples.push_back(*S);
  }
  Clock = ClockMap::fromSamples(Samples);
  if (!Clock) {
    NoClock = "the executor's clock readings make no sense";
    return;
  }
  ExecutorPid = Pid;
}

TraceTrack SessionTrace::hostTrack(TraceEvents &E) {
  TraceTrack T{HostPid, thisThread()};
  if (File->firstSight(HostPid, 0))
    E.processName(HostPid, std::string(program_invocation_short_name) + " (host)");
  if (File->firstSight(T.Pid, T.Tid))
    E.threadName(T, threadLabel());
  return T;
}

// The executor's connection process has one track: its phases of each
// launch run one after another.
TraceTrack SessionTrace::executorTrack(TraceEvents &E) {
  TraceTrack T{ExecutorPid, ExecutorPid};
  if (File->firstSight(T.Pid, 0))
    E.processName(T.Pid, "catalyst-remote-executor " + Address + " (connection process)");
  if (File->firstSight(T.Pid, T.Tid))
    E.threadName(T, "launches");
  return T;
}

void SessionTrace::opened(const OpenMarks &M, Strategy Transfer, StringRef Error) {
  TraceEvents E;
  TraceTrack Host = hostTrack(E);
  uint64_t End = ns(PhaseClock::now());
  E.span(("open " + Address), "session", Host, ns(M.Start), End - ns(M.Start), [&](TraceArgs &J) {
    if (!Error.empty()) {
      J.add("address", Address);
      J.add("error", Error);
      return;
    }
    describeSession(J, Transfer);
  });
  const std::pair<const char *, PhaseClock::time_point> Steps[] = {
      {"connect", M.Connected}, {"setup", M.SetUp}, {"clock sync", M.Synced}};
  uint64_t From = ns(M.Start);
  for (auto &[Name, Until] : Steps) {
    if (!began(Until))
      break;
    E.span(Name, "session", Host, From, ns(Until) - From);
    From = ns(Until);
  }
  if (Clock)
    executorTrack(E);
  File->append(E.text());
}

void SessionTrace::describeSession(TraceArgs &J, Strategy Transfer) const {
  J.add("address", Address);
  J.add("strategy", strategyName(Transfer));
  if (!Clock) {
    J.add("executor_clock", NoClock);
    return;
  }
  J.add("executor_pid", ExecutorPid);
  J.add("clock_offset_ns", Clock->offsetNs());
  J.add("clock_uncertainty_ns", Clock->uncertaintyNs());
}

void SessionTrace::started(PhaseClock::time_point Start, Strategy Transfer) {
  TraceEvents E;
  TraceTrack Host = hostTrack(E);
  uint64_t From = ns(Start), Now = ns(PhaseClock::now());
  E.span(("trace " + Address), "session", Host, From, Now - From,
         [&](TraceArgs &J) { describeSession(J, Transfer); });
  E.span("clock sync", "session", Host, From, Now - From);
  if (Clock)
    executorTrack(E);
  File->append(E.text());
}

void SessionTrace::hostPhases(TraceEvents &E, TraceTrack Host, const TracedLaunch &L) {
  const PhaseTimes &P = L.Stats.Phases;
  const LaunchTimeline &W = L.When;
  struct Phase {
    const char *Name;
    PhaseClock::time_point Start;
    uint64_t Ns, Bytes;
  };
  const Phase Phases[] = {{"plan", W.Plan, P.PlanNs, 0},
                          {"send", W.Send, P.SendNs, L.InputBytes},
                          {"invoke", W.Invoke, W.InvokeNs, 0},
                          {"receive", W.Receive, P.ReceiveNs, L.OutputBytes},
                          {"rewrite", W.Rewrite, P.RewriteNs, 0}};
  uint64_t End = ns(W.End);
  for (const Phase &Ph : Phases) {
    if (!began(Ph.Start))
      continue;
    uint64_t Start = ns(Ph.Start);
    // A phase the launch failed in has no time of its own: it ran until
    // the launch ended.
    bool Unfinished = Ph.Ns == 0 && !L.Error.empty();
    uint64_t Ns = Unfinished ? End - std::min(End, Start) : Ph.Ns;
    E.span(Ph.Name, "phase", Host, Start, Ns, [&](TraceArgs &J) {
      if (Ph.Bytes)
        J.add("bytes", Ph.Bytes);
      if (Unfinished)
        J.add("unfinished", true);
    });
  }
}

const char *SessionTrace::executorPhases(TraceEvents &E, const TracedLaunch &L, uint64_t Number) {
  if (L.Strategy == Strategy::Naive)
    return nullptr; // the upstream protocol reports nothing
  if (!Clock)
    return "no executor clock";
  const PhaseTimes &P = L.Stats.Phases;
  bool Zero = L.Strategy == Strategy::ZeroCopy;
  const std::pair<const char *, uint64_t> All[] = {
      {"copy-in", P.CopyInNs}, {"kernel", P.KernelNs}, {"copy-out", P.CopyOutNs}};
  ArrayRef<std::pair<const char *, uint64_t>> Phases =
      Zero ? ArrayRef(All) : ArrayRef(All).slice(1, 1);
  if (L.When.ExecutorStartNs == 0)
    return "not reported";
  SmallVector<uint64_t, 3> Durations;
  for (auto &[Name, Ns] : Phases)
    Durations.push_back(Ns);
  auto Start = Clock->place(L.When.ExecutorStartNs, Durations, ns(L.When.Plan), ns(L.When.End));
  if (!Start)
    return "dropped: the executor's times fall outside the launch";
  TraceTrack Exec = executorTrack(E);
  uint64_t Total = 0;
  for (uint64_t D : Durations)
    Total += D;
  E.span(("launch " + L.Entry).str(), "launch", Exec, *Start, Total, [&](TraceArgs &J) {
    J.add("launch", Number);
    J.add("clock_uncertainty_ns", Clock->toleranceAt(ns(L.When.End)));
  });
  uint64_t At = *Start;
  for (auto &[Name, Ns] : Phases) {
    E.span(Name, "phase", Exec, At, Ns);
    At += Ns;
  }
  return nullptr;
}

void SessionTrace::launched(const TracedLaunch &L) {
  uint64_t Number = L.Number;
  TraceEvents E;
  TraceTrack Host = hostTrack(E);
  const char *NoExecutorSpans = L.Error.empty() ? executorPhases(E, L, Number) : nullptr;
  const LaunchStats &S = L.Stats;
  uint64_t Start = ns(L.When.Plan);
  E.span(("launch " + L.Entry).str(), "launch", Host, Start, ns(L.When.End) - Start,
         [&](TraceArgs &J) {
           J.add("launch", Number);
           if (Clock)
             J.add("executor_pid", ExecutorPid);
           J.add("strategy", strategyName(L.Strategy));
           J.add("transport", transportName(L.Over));
           J.add("entry", L.Entry);
           if (!L.Object.empty())
             J.add("object", L.Object);
           J.add("inputs", uint64_t(L.Inputs));
           J.add("outputs", uint64_t(L.Outputs));
           J.add("input_bytes", L.InputBytes);
           J.add("output_bytes", L.OutputBytes);
           J.add("bytes_sent", S.BytesSent);
           J.add("bytes_received", S.BytesReceived);
           J.add("round_trips", S.RoundTrips);
           J.add("messages", S.Messages);
           J.add("host_copy_bytes", S.HostCopyBytes);
           J.add("executor_copy_bytes", S.ExecutorCopyBytes);
           if (L.ResidentInputs || L.KeptOutputs) {
             J.add("resident_inputs", L.ResidentInputs);
             J.add("kept_outputs", L.KeptOutputs);
             J.add("resident_bytes", S.ResidentBytes);
           }
           if (NoExecutorSpans)
             J.add("executor_spans", NoExecutorSpans);
           if (!L.Error.empty())
             J.add("error", L.Error);
         });
  hostPhases(E, Host, L);
  File->append(E.text());
}

void SessionTrace::residentCall(const TracedResident &R) {
  TraceEvents E;
  TraceTrack Host = hostTrack(E);
  uint64_t From = ns(R.Start);
  std::string Name = R.Call.str() + " resident";
  if (R.Id)
    Name += " " + std::to_string(R.Id);
  E.span(Name, "resident", Host, From, ns(PhaseClock::now()) - From, [&](TraceArgs &J) {
    if (R.Id)
      J.add("resident", R.Id);
    J.add("bytes", R.Bytes);
    J.add("bytes_sent", R.Stats.BytesSent);
    J.add("bytes_received", R.Stats.BytesReceived);
    J.add("round_trips", R.Stats.RoundTrips);
    if (!R.Error.empty())
      J.add("error", R.Error);
  });
  File->append(E.text());
}

void SessionTrace::binarySent(StringRef Kind, StringRef Path, PhaseClock::time_point Start,
                              StringRef Error) {
  TraceEvents E;
  TraceTrack Host = hostTrack(E);
  uint64_t From = ns(Start);
  E.span((Kind + " " + sys::path::filename(Path)).str(), "session", Host, From,
         ns(PhaseClock::now()) - From, [&](TraceArgs &J) {
           J.add("path", Path);
           uint64_t Size = 0;
           if (!sys::fs::file_size(Path, Size))
             J.add("file_bytes", Size);
           if (!Error.empty())
             J.add("error", Error);
         });
  File->append(E.text());
}

void SessionTrace::closed(PhaseClock::time_point Start, StringRef Error) {
  TraceEvents E;
  TraceTrack Host = hostTrack(E);
  uint64_t From = ns(Start);
  E.span(("close " + Address), "session", Host, From, ns(PhaseClock::now()) - From,
         [&](TraceArgs &J) {
           if (!Error.empty())
             J.add("error", Error);
         });
  File->append(E.text());
}

} // namespace catalyst::remote
