//===- TraceTest.cpp - Launch traces, written and read back ---------------===//
//
// Sessions trace to files that are then parsed as JSON and checked: every
// phase of each strategy drawn inside its launch, on the process that ran
// it (the host's and the executor connection's real process ids), the
// executor's phases mapped onto the host's clock inside the host's spans
// that caused them, give or take the stated uncertainty; failed launches,
// shared files, and programs that end without closing their session.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "TraceReader.h"
#include "catalyst/remote/Session.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
namespace fs = std::filesystem;

namespace {

// Microseconds two readings of one clock, each written to the nanosecond,
// may be apart after printing and parsing.
constexpr double Rounding = 0.002;

// A private folder for a test's traces, removed with it.
class TraceDir {
public:
  TraceDir() {
    std::string Pattern = (fs::temp_directory_path() / "crtraceXXXXXX").string();
    if (::mkdtemp(Pattern.data()))
      Dir = Pattern;
  }
  ~TraceDir() {
    std::error_code EC;
    fs::remove_all(Dir, EC);
  }
  std::string path(const std::string &Name) const { return (Dir / Name).string(); }

private:
  fs::path Dir;
};

std::set<std::string> namesOf(const std::vector<const TraceSpan *> &Spans,
                              const TraceSpan *Except) {
  std::set<std::string> Names;
  for (const TraceSpan *S : Spans)
    if (S != Except)
      Names.insert(S->Name);
  return Names;
}

const TraceSpan *only(const std::vector<const TraceSpan *> &Spans, const std::string &Name) {
  const TraceSpan *Found = nullptr;
  for (const TraceSpan *S : Spans)
    if (S->Name == Name) {
      EXPECT_EQ(Found, nullptr) << "two " << Name << " spans";
      Found = S;
    }
  return Found;
}

// The host's launch spans of the session with the executor process Exec.
std::vector<const TraceSpan *> hostLaunches(const Trace &T, int64_t Exec) {
  std::vector<const TraceSpan *> Out;
  for (const TraceSpan *S : T.named("launch "))
    if (S->Pid == ::getpid() && S->intArg("executor_pid") == Exec)
      Out.push_back(S);
  return Out;
}

const TraceSpan *executorLaunch(const Trace &T, int64_t Exec, int64_t Number) {
  for (const TraceSpan *S : T.named("launch "))
    if (S->Pid == Exec && S->intArg("launch") == Number)
      return S;
  return nullptr;
}

std::set<std::string> hostPhases(Strategy S) {
  if (S == Strategy::ZeroCopy)
    return {"plan", "send", "receive", "rewrite"};
  return {"plan", "send", "invoke", "receive", "rewrite"};
}

std::set<std::string> executorPhases(Strategy S) {
  switch (S) {
  case Strategy::ZeroCopy:
    return {"copy-in", "kernel", "copy-out"};
  case Strategy::Batched:
    return {"kernel"};
  default:
    return {}; // the upstream protocol reports nothing
  }
}

// The executor's phases of launch L: inside it, and inside the host's
// spans that caused them, give or take the uncertainty the trace states.
void checkExecutorSide(const Trace &T, Strategy S, const TraceSpan &L, int64_t Exec) {
  const TraceSpan *E = executorLaunch(T, Exec, L.intArg("launch"));
  if (S == Strategy::Naive) {
    EXPECT_EQ(E, nullptr) << "naive launches report no executor phases";
    return;
  }
  ASSERT_NE(E, nullptr) << "no executor spans for launch " << L.intArg("launch") << " ("
                        << L.textArg("executor_spans") << ")";
  double Uncertainty = E->intArg("clock_uncertainty_ns") / 1000.0;
  ASSERT_GE(Uncertainty, 0);
  EXPECT_GE(E->Start, L.Start - Uncertainty);
  EXPECT_LE(E->end(), L.end() + Uncertainty);
  auto Phases = T.within(Exec, Exec, E->Start, E->end(), Rounding);
  EXPECT_EQ(namesOf(Phases, E), executorPhases(S));
  auto Host = T.within(L.Pid, L.Tid, L.Start, L.end(), Rounding);
  if (S == Strategy::ZeroCopy) {
    // Inputs land after the host began sending them; outputs are ready
    // before the host begins receiving them.
    EXPECT_GE(only(Phases, "copy-in")->Start, only(Host, "send")->Start - Uncertainty);
    EXPECT_LE(only(Phases, "copy-out")->end(), only(Host, "receive")->Start + Uncertainty);
  } else {
    const TraceSpan *Invoke = only(Host, "invoke");
    EXPECT_GE(only(Phases, "kernel")->Start, Invoke->Start - Uncertainty);
    EXPECT_LE(only(Phases, "kernel")->end(), Invoke->end() + Uncertainty);
  }
}

// Opens a session of strategy S with Exec, tracing to Path, runs two
// launches, closes it, and checks the trace: the executor's clock is
// OffsetNs ahead of the host's (the estimate must admit it), every phase is
// inside its launch on the process that ran it.
void traceTwoLaunches(ExecutorProcess &Exec, Strategy S, const std::string &Path,
                      int64_t OffsetNs) {
  SessionOptions O;
  O.TracePath = Path;
  auto Sess = openWithConcat(Exec.address(), S, O);
  ASSERT_TRUE(Sess);
  std::vector<pid_t> Conn;
  ASSERT_TRUE(Exec.waitForConnections(1, Conn, std::chrono::seconds(5)));
  std::mt19937_64 Rng(7);
  const std::vector<std::vector<int64_t>> Sizes = {{1000, 3000}, {1 << 20}};
  for (const auto &Lengths : Sizes)
    ASSERT_TRUE(concatMatches(*Sess, byteInputs(Lengths, Rng)));
  ASSERT_EQ(messageOf(Sess->close()), "");

  auto T = readTrace(Path);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  EXPECT_EQ(T->Processes.count(::getpid()), 1u);
  EXPECT_EQ(T->Processes.count(Conn[0]), 1u);
  auto Opens = T->named("open ");
  ASSERT_EQ(Opens.size(), 1u);
  EXPECT_EQ(Opens[0]->Pid, ::getpid());
  EXPECT_EQ(Opens[0]->intArg("executor_pid"), Conn[0]);
  int64_t Estimate = Opens[0]->Args.getInteger("clock_offset_ns").value_or(INT64_MIN / 2);
  EXPECT_LE(std::abs(Estimate - OffsetNs), Opens[0]->intArg("clock_uncertainty_ns"));
  EXPECT_EQ(T->named("link concat.o").size(), 1u);
  EXPECT_EQ(T->named("close ").size(), 1u);

  auto Launches = hostLaunches(*T, Conn[0]);
  ASSERT_EQ(Launches.size(), Sizes.size());
  for (size_t I = 0; I < Launches.size(); ++I) {
    const TraceSpan &L = *Launches[I];
    SCOPED_TRACE("launch " + std::to_string(I + 1));
    EXPECT_EQ(L.intArg("launch"), int64_t(I + 1));
    EXPECT_EQ(L.textArg("strategy"), strategyName(S));
    int64_t Bytes = 0;
    for (int64_t N : Sizes[I])
      Bytes += N;
    EXPECT_EQ(L.intArg("input_bytes"), Bytes);
    EXPECT_EQ(L.intArg("output_bytes"), Bytes);
    // Zero-copy over shared memory moves the payload through no socket: the
    // host copies it once each way.
    if (L.textArg("transport") == "local" && S == Strategy::ZeroCopy)
      EXPECT_EQ(L.intArg("host_copy_bytes"), 2 * Bytes);
    else
      EXPECT_GT(L.intArg("bytes_sent"), Bytes);
    auto Phases = T->within(L.Pid, L.Tid, L.Start, L.end(), Rounding);
    EXPECT_EQ(namesOf(Phases, &L), hostPhases(S));
    EXPECT_EQ(only(Phases, "send")->intArg("bytes"), Bytes);
    EXPECT_EQ(only(Phases, "receive")->intArg("bytes"), Bytes);
    checkExecutorSide(*T, S, L, Conn[0]);
  }
}

class TraceTest : public ::testing::TestWithParam<Strategy> {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }
  ExecutorProcess Exec;
  TraceDir Dir;
};

// One machine, one steady clock: the true offset is 0.
TEST_P(TraceTest, EveryPhaseOnTheProcessThatRanIt) {
  traceTwoLaunches(Exec, GetParam(), Dir.path("trace.json"), 0);
}

INSTANTIATE_TEST_SUITE_P(Strategies, TraceTest,
                         ::testing::Values(Strategy::Naive, Strategy::Batched, Strategy::ZeroCopy),
                         [](const auto &Info) { return strategyTestName(Info.param); });

// After each failed launch the file is valid already, session still open;
// the launch is there with its error and the phases it got to.
TEST_P(TraceTest, FailedLaunchesLeaveAValidFile) {
  SessionOptions O;
  O.TracePath = Dir.path("failed.json");
  auto Sess = openWithConcat(Exec.address(), GetParam(), O);
  ASSERT_TRUE(Sess);
  for (const char *Object : {"bad_output", "crash"})
    ASSERT_EQ(messageOf(Sess->sendBinary(kernelObject(Object), BinaryFormat::Object)), "");
  Desc In(1, 1), Copy(1, 1), Bad(1, 1), None(1, 1);
  char Bytes[4] = {1, 2, 3, 4};
  In.setAligned(Bytes);
  In.setSize(0, 4);
  In.setStride(0, 1);
  struct Failure {
    const char *Entry, *Object;
    std::vector<MemrefArg> Inputs, Outputs;
  };
  const Failure Failures[] = {
      {"no_such_entry", "concat.o", {}, {{None.data(), 1, 1}}},
      {"bad_output",
       "bad_output.o",
       {{In.data(), 1, 1}},
       {{Copy.data(), 1, 1}, {Bad.data(), 1, 1}}},
      {"crash", "crash.o", {}, {}},
  };
  size_t Failed = 0;
  for (const Failure &F : Failures) {
    SCOPED_TRACE(F.Entry);
    std::string Error =
        errorText(Sess->launch({remoteEntry(F.Entry), F.Object, F.Inputs, F.Outputs}));
    auto T = readTrace(O.TracePath);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    auto Launches = T->named("launch ");
    ASSERT_EQ(Launches.size(), ++Failed);
    const TraceSpan &L = *Launches.back();
    EXPECT_EQ(L.textArg("entry"), remoteEntry(F.Entry));
    EXPECT_EQ(L.textArg("error"), Error);
    auto Phases = T->within(L.Pid, L.Tid, L.Start, L.end(), Rounding);
    EXPECT_EQ(namesOf(Phases, &L).count("plan"), 1u);
  }
  // The crash ended the connection: what close says does not matter here.
  (void)messageOf(Sess->close());
  auto T = readTrace(O.TracePath);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  EXPECT_EQ(T->named("close ").size(), 1u);
}

// An executor whose steady clock is 1000 s ahead of the host's, as another
// machine's would be (tests/trace/clock_ahead.c): the offset is found and
// the executor's phases are mapped back inside the host's spans.
TEST(TraceClockTest, AnExecutorClockFarAheadIsMappedBack) {
  ExecutorProcess Exec;
  ExecutorOptions EO;
  // An executor built with AddressSanitizer wants its runtime loaded
  // first; the shim replaces no function the runtime needs to see first.
  const char *Asan = std::getenv("ASAN_OPTIONS");
  EO.Env = {std::string("LD_PRELOAD=") + CLOCK_AHEAD_PATH,
            std::string("ASAN_OPTIONS=") + (Asan ? Asan : "") + ":verify_asan_link_order=0"};
  ASSERT_TRUE(Exec.start(EO));
  TraceDir Dir;
  for (Strategy S : {Strategy::Batched, Strategy::ZeroCopy}) {
    SCOPED_TRACE(strategyName(S));
    traceTwoLaunches(Exec, S, Dir.path(std::string(strategyName(S)) + ".json"),
                     int64_t(1000) * 1000 * 1000 * 1000);
  }
}

// Catalyst's own executor (here, this one offering only what Catalyst's
// does) has no clock and reports no phases: the trace has the host's side,
// and says why the executor's is missing.
TEST(TraceClockTest, AnUpstreamExecutorGivesTheHostSideOnly) {
  ExecutorProcess Exec;
  ExecutorOptions EO;
  EO.UpstreamOnly = true;
  ASSERT_TRUE(Exec.start(EO));
  TraceDir Dir;
  SessionOptions O;
  O.TracePath = Dir.path("upstream.json");
  auto Sess = openWithConcat(Exec.address(), Strategy::Naive, O);
  ASSERT_TRUE(Sess);
  std::mt19937_64 Rng(3);
  ASSERT_TRUE(concatMatches(*Sess, byteInputs({64}, Rng)));
  ASSERT_EQ(messageOf(Sess->close()), "");
  auto T = readTrace(O.TracePath);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  auto Opens = T->named("open ");
  ASSERT_EQ(Opens.size(), 1u);
  EXPECT_EQ(Opens[0]->textArg("executor_clock"), "the executor has no clock service");
  auto Launches = T->named("launch ");
  ASSERT_EQ(Launches.size(), 1u);
  EXPECT_EQ(Launches[0]->Pid, ::getpid());
  auto Phases =
      T->within(::getpid(), Launches[0]->Tid, Launches[0]->Start, Launches[0]->end(), Rounding);
  EXPECT_EQ(namesOf(Phases, Launches[0]), hostPhases(Strategy::Naive));
  EXPECT_EQ(T->Processes.size(), 1u) << "the host alone";
}

// Sessions of one process, on threads of their own, write to one file (one
// of them names it another way); every launch of each is there, each
// executor under its own process.
TEST(TraceFileTest, SessionsOfOneProcessShareAFile) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  TraceDir Dir;
  constexpr int Launches = 10;
  const Strategy All[] = {Strategy::Naive, Strategy::Batched, Strategy::ZeroCopy};
  std::vector<std::thread> Threads;
  for (Strategy S : All)
    Threads.emplace_back([&, S] {
      SessionOptions O;
      O.TracePath = Dir.path(S == Strategy::Batched ? "./shared.json" : "shared.json");
      auto Sess = openWithConcat(Exec.address(), S, O);
      ASSERT_TRUE(Sess);
      std::mt19937_64 Rng(static_cast<uint64_t>(S));
      for (int I = 0; I < Launches; ++I)
        ASSERT_TRUE(concatMatches(*Sess, byteInputs({100, 200}, Rng)));
    });
  for (std::thread &T : Threads)
    T.join();
  auto T = readTrace(Dir.path("shared.json"));
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  auto Opens = T->named("open ");
  ASSERT_EQ(Opens.size(), 3u);
  std::set<int64_t> Executors;
  for (const TraceSpan *Open : Opens) {
    int64_t Pid = Open->intArg("executor_pid");
    Executors.insert(Pid);
    EXPECT_EQ(T->Processes.count(Pid), 1u) << Pid;
    EXPECT_EQ(hostLaunches(*T, Pid).size(), size_t(Launches));
  }
  EXPECT_EQ(Executors.size(), 3u);
  EXPECT_EQ(T->named("launch ").size(), size_t(3 * Launches + 2 * Launches)) << "host and executor";
}

// A program tracing through the C ABI (CATALYST_REMOTE_TRACE) that never
// closes its session: the file is valid whether the library's destructors
// close it, nothing runs after the launch (_exit), or a launch failed.
TEST(TraceFileTest, AProgramThatNeverClosesLeavesAValidFile) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  TraceDir Dir;
  struct Ending {
    const char *Mode;
    size_t Launches, Closes;
  };
  for (const Ending &E : {Ending{"exit", 1, 1}, Ending{"_exit", 1, 0}, Ending{"fail", 2, 1}}) {
    SCOPED_TRACE(E.Mode);
    std::string Path = Dir.path(std::string(E.Mode) + ".json");
    auto R = runCommand({TRACE_PROBE_PATH, Exec.address(), kernelObject("concat"), Path, E.Mode},
                        std::chrono::seconds(20));
    ASSERT_EQ(R.ExitStatus, 0) << R.Output;
    auto T = readTrace(Path);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    auto Launches = T->named("launch ");
    // Zerocopy: each launch is drawn on the host and on the executor.
    ASSERT_EQ(Launches.size(), E.Launches + 1);
    EXPECT_NE(Launches[0]->Pid, ::getpid()) << "the probe's own process";
    EXPECT_EQ(T->named("close ").size(), E.Closes);
    if (E.Launches == 2) {
      EXPECT_NE(Launches[0]->textArg("error").find("no_such_entry"), std::string::npos);
    }
  }
}

} // namespace
