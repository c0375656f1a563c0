//===- TraceToggleTest.cpp - Traces started and stopped on open sessions --===//
//
// Session::startTrace and stopTrace on a session already open: the file
// holds the launches made while the trace was on and no other, is valid JSON
// and takes nothing once stopTrace returned; a second trace while one is on,
// a path that cannot be written and a closed session are refused, saying
// why; and a trace toggled again and again while two threads launch leaves
// every launch whole in one file or absent from all.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Pace.h"
#include "Procfs.h"
#include "TempDir.h"
#include "Text.h"
#include "TraceReader.h"
#include "catalyst/remote/Failure.h"
#include "catalyst/remote/Session.h"

#include <atomic>
#include <set>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// The input bytes of each launch the host drew, in the file's order.
std::vector<int64_t> launchedBytes(const Trace &T) {
  std::vector<int64_t> Out;
  for (const TraceSpan *S : T.named("launch "))
    if (S->Pid == ::getpid())
      Out.push_back(S->intArg("input_bytes"));
  return Out;
}

// The spans launch L's track holds within it: its host phases.
std::set<std::string> phasesOf(const Trace &T, const TraceSpan &L) {
  std::set<std::string> Names;
  for (const TraceSpan *S : T.within(L.Pid, L.Tid, L.Start, L.end(), 0.002))
    if (S != &L && S->Category == "phase")
      Names.insert(S->Name);
  return Names;
}

Trace read(const std::string &Path) {
  auto T = readTrace(Path);
  if (!T) {
    ADD_FAILURE() << Path << ": " << llvm::toString(T.takeError());
    return {};
  }
  return std::move(*T);
}

class TraceToggleTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }

  // One concat launch of Bytes input bytes, which the trace shows.
  ::testing::AssertionResult launch(Session &S, int64_t Bytes) {
    return concatMatches(S, byteInputs({Bytes}, Rng));
  }

  ExecutorProcess Exec;
  TempDir Dir;
  std::mt19937_64 Rng{11};
};

class TraceToggleStrategyTest : public TraceToggleTest,
                                public ::testing::WithParamInterface<Strategy> {};

// Launches before startTrace and after stopTrace are not in the file, those
// between are, with the executor's side; a second trace to the same path
// adds to the file, as sessions sharing a path do.
TEST_P(TraceToggleStrategyTest, OnlyLaunchesMadeWhileTracingAreInTheFile) {
  Strategy S = GetParam();
  auto Sess = openWithConcat(Exec.address(), S);
  ASSERT_TRUE(Sess);
  std::vector<pid_t> Conn;
  ASSERT_TRUE(Exec.waitForConnections(1, Conn, std::chrono::seconds(5)));
  std::string Path = Dir.path("toggled.json");
  ASSERT_TRUE(launch(*Sess, 10));
  ASSERT_EQ(messageOf(Sess->startTrace(Path)), "");
  ASSERT_TRUE(launch(*Sess, 20));
  ASSERT_TRUE(launch(*Sess, 30));
  ASSERT_EQ(messageOf(Sess->stopTrace()), "");
  std::string Stopped = readFile(Path);
  ASSERT_TRUE(launch(*Sess, 40));
  EXPECT_EQ(readFile(Path), Stopped) << "written after stopTrace returned";

  Trace T = read(Path);
  EXPECT_EQ(launchedBytes(T), (std::vector<int64_t>{20, 30}));
  auto Starts = T.named("trace ");
  ASSERT_EQ(Starts.size(), 1u);
  EXPECT_EQ(Starts[0]->textArg("strategy"), strategyName(S));
  EXPECT_EQ(Starts[0]->intArg("executor_pid"), Conn[0]) << "the executor's clock was read";
  EXPECT_EQ(T.named("open ").size(), 0u);
  std::vector<int64_t> Numbers, OnExecutor;
  for (const TraceSpan *L : T.named("launch "))
    (L->Pid == ::getpid() ? Numbers : OnExecutor).push_back(L->intArg("launch"));
  EXPECT_EQ(Numbers, (std::vector<int64_t>{2, 3})) << "numbered among the session's launches";
  if (S != Strategy::Naive) {
    EXPECT_EQ(OnExecutor, Numbers);
  }

  ASSERT_EQ(messageOf(Sess->startTrace(Path)), "");
  ASSERT_TRUE(launch(*Sess, 50));
  ASSERT_EQ(messageOf(Sess->close()), "");
  ASSERT_EQ(messageOf(Sess->stopTrace()), "");
  T = read(Path);
  EXPECT_EQ(launchedBytes(T), (std::vector<int64_t>{20, 30, 50}));
  EXPECT_EQ(T.named("trace ").size(), 2u);
  EXPECT_EQ(T.named("close ").size(), 1u) << "closed while tracing";
}

INSTANTIATE_TEST_SUITE_P(Strategies, TraceToggleStrategyTest,
                         ::testing::Values(Strategy::Naive, Strategy::Batched, Strategy::ZeroCopy),
                         [](const auto &Info) { return strategyTestName(Info.param); });

// A session opened with TracePath traces from its start; starting another
// trace fails, naming the one on, until stopTrace ends it, also when
// startTrace began it.
TEST_F(TraceToggleTest, StartingWhileATraceIsOnFailsNamingIt) {
  SessionOptions O;
  O.TracePath = Dir.path("opened.json");
  auto Sess = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(Sess);
  std::string Other = Dir.path("other.json");
  std::string Msg = errorText(Sess->startTrace(Other));
  EXPECT_TRUE(mentions(Msg, "to '" + Other + "'")) << Msg;
  EXPECT_TRUE(mentions(Msg, "a trace to '" + O.TracePath + "' is on already")) << Msg;
  EXPECT_TRUE(mentions(Msg, "SessionOptions::TracePath")) << Msg;
  ASSERT_TRUE(launch(*Sess, 10));
  ASSERT_EQ(messageOf(Sess->stopTrace()), "");
  ASSERT_EQ(messageOf(Sess->startTrace(Other)), "");
  Msg = errorText(Sess->startTrace(Other));
  EXPECT_TRUE(mentions(Msg, "a trace to '" + Other + "' is on already")) << Msg;
  ASSERT_TRUE(launch(*Sess, 20));
  ASSERT_EQ(messageOf(Sess->stopTrace()), "");
  ASSERT_EQ(messageOf(Sess->stopTrace()), "") << "nothing to stop";
  ASSERT_EQ(messageOf(Sess->close()), "");

  Trace Opened = read(O.TracePath);
  EXPECT_EQ(launchedBytes(Opened), std::vector<int64_t>{10});
  EXPECT_EQ(Opened.named("open ").size(), 1u);
  EXPECT_EQ(Opened.named("close ").size(), 0u) << "closed after its trace stopped";
  EXPECT_EQ(Opened.named("trace ").size(), 0u) << "the refused start wrote nothing";
  Trace Started = read(Other);
  EXPECT_EQ(launchedBytes(Started), std::vector<int64_t>{20});
  EXPECT_EQ(Started.named("trace ").size(), 1u);
}

// A path that cannot be written (or none) is refused, naming it and why,
// and leaves the session untraced; so is tracing a closed session.
TEST_F(TraceToggleTest, ABadPathOrAClosedSessionIsRefusedSayingWhy) {
  auto Sess = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(Sess);
  std::string Bad = Dir.path("no-such-folder/trace.json");
  FailureReport R = reportFailure(Sess->startTrace(Bad));
  EXPECT_EQ(R.Kind, FailureKind::BadArgument);
  std::string Msg = R.Message;
  EXPECT_TRUE(mentions(Msg, "cannot write trace file '" + Bad + "'")) << Msg;
  EXPECT_TRUE(mentions(Msg, "No such file or directory")) << Msg;
  EXPECT_TRUE(mentions(Msg, Exec.address())) << Msg;
  Msg = errorText(Sess->startTrace(""));
  EXPECT_TRUE(mentions(Msg, "to '': the path is empty")) << Msg;
  ASSERT_TRUE(launch(*Sess, 10));
  std::string Good = Dir.path("good.json");
  ASSERT_EQ(messageOf(Sess->startTrace(Good)), "") << "no trace was left on";
  ASSERT_EQ(messageOf(Sess->stopTrace()), "");
  ASSERT_EQ(messageOf(Sess->close()), "");
  R = reportFailure(Sess->startTrace(Good));
  EXPECT_EQ(R.Kind, FailureKind::Closed);
  EXPECT_TRUE(mentions(R.Message, "is closed")) << R.Message;
  EXPECT_EQ(messageOf(Sess->stopTrace()), "");
}

// Launches on two threads, without pause, while the trace starts and stops
// again and again, to a new file each time: each file is valid JSON, takes
// nothing once stopTrace returned, and holds whole launches only (every
// host phase inside each), at least one each time.
TEST_F(TraceToggleTest, TogglingWhileTwoThreadsLaunchKeepsEveryLaunchWhole) {
  auto Sess = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(Sess);
  std::atomic<bool> Done{false};
  std::atomic<uint64_t> Launched{0};
  std::vector<std::thread> Threads;
  for (uint64_t Seed : {1, 2})
    Threads.emplace_back([&, Seed] {
      std::mt19937_64 Rng(Seed);
      while (!Done) {
        EXPECT_TRUE(concatMatches(*Sess, byteInputs({64, 32}, Rng)));
        ++Launched;
      }
    });
  struct Joiner {
    std::atomic<bool> &Done;
    std::vector<std::thread> &Threads;
    ~Joiner() {
      Done = true;
      for (std::thread &T : Threads)
        T.join();
    }
  } Join{Done, Threads};

  constexpr int Toggles = 12;
  std::vector<std::string> Paths, Stopped;
  for (int I = 0; I < Toggles; ++I) {
    Paths.push_back(Dir.path("toggle" + std::to_string(I) + ".json"));
    ASSERT_EQ(messageOf(Sess->startTrace(Paths.back())), "");
    // Each thread may yet count one launch begun before the start: the
    // third counted from here began after it.
    uint64_t From = Launched;
    auto Deadline = Clock::now() + paced(10s);
    while (Launched < From + 3 && Clock::now() < Deadline)
      std::this_thread::sleep_for(100us);
    ASSERT_GE(Launched, From + 3) << "the launching threads stalled";
    ASSERT_EQ(messageOf(Sess->stopTrace()), "");
    Stopped.push_back(readFile(Paths.back()));
  }
  Done = true;
  for (int I = 0; I < Toggles; ++I) {
    SCOPED_TRACE(Paths[I]);
    EXPECT_EQ(readFile(Paths[I]), Stopped[I]) << "written after stopTrace returned";
    Trace T = read(Paths[I]);
    size_t Host = 0;
    for (const TraceSpan *L : T.named("launch "))
      if (L->Pid == ::getpid()) {
        ++Host;
        EXPECT_EQ(phasesOf(T, *L), (std::set<std::string>{"plan", "send", "receive", "rewrite"}))
            << "launch " << L->intArg("launch");
      }
    EXPECT_GE(Host, 1u);
  }
}

} // namespace
