//===- SoakTest.cpp - Long runs leave nothing behind on either side -------===//
//
// One executor, sessions under every transfer strategy, and many launches:
//  - tiny ones (8 B each way) under each strategy,
//  - large ones (16 MiB each way) under the default, zerocopy,
//  - sessions opened, used once and closed (zerocopy),
//  - failed launches of several kinds under each strategy (Fault below).
// Everything runs once as a warm-up (allocators reach their working set,
// worker threads start), then the baseline is taken, then everything runs
// again at full count. At the end resident memory, open descriptors and
// threads of this process, the executor's listener and each connection
// process must be where the baseline left them (bounds below), no output
// buffer the session handed over may be alive, and the listener must have
// reaped every connection process it forked.
//
// CATALYST_REMOTE_SOAK_SCALE (default 1) multiplies every count (ctest runs
// soak.short at 0.05 in the default suite, soak.full at 1 under -L soak).
// The figures go to stdout between "soak-begin" and "soak-end", one
// "key=value ..." line per phase and per process.
//
// CATALYST_REMOTE_SOAK_INJECT=what[,what...] adds a leak after the measured
// run, to see a bound fail: host-rss, host-fd, host-thread, exec-rss,
// exec-fd, exec-thread (into every connection process), host-output,
// open-session.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Procfs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <map>
#include <mimalloc.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * KiB;

// --- Bounds --------------------------------------------------------------
//
// Open descriptors: exactly the baseline, everywhere. Nothing a launch, a
// failure or a closed session does may keep one. Threads: exactly the
// baseline in the executor's processes (the listener has one, a connection
// process its fixed workers); in this process at most HostThreadSlack more.
// Each session keeps the threads its ORC tasks ran on (TaskPool) and starts
// another only when none is idle, so a kept session may reach a new peak of
// tasks in flight after the baseline (seen once: one thread more); the four
// kept sessions may do so by one thread each. A thread kept per launch or
// per closed session crosses that at once. Closing is asynchronous on the
// executor side (the connection process exits, the listener reaps it), so
// the end figures are polled for up to SettleTime before they count.
//
// Resident memory, growth from the baseline to the end:
//  - connection processes of the small launches (tiny and failed ones):
//    at most 8 MiB. The executor allocates with mimalloc, a heap per
//    thread: a failed launch's 1 MiB output is allocated by the worker that
//    ran the kernel and may be freed by another thread, and such a block
//    goes back to its heap only when its owner allocates again, so each of
//    the 4 workers can hold one or two of them at the end that it did not
//    hold at the baseline (a full run here ended 4 MiB up once, 0 other
//    times). A failed launch that keeps its 1 MiB output crosses 8 MiB at
//    the ninth (each fault runs at least 25 times, at any scale); a tiny
//    launch that keeps 84 B crosses it over 100,000.
//  - the connection process of the 16 MiB launches: at most 40 MiB, two
//    16 MiB blocks and change. Each worker thread's heap may keep a freed
//    16 MiB output, and which worker runs a kernel changes from launch to
//    launch, so a block more or less than at the baseline is normal (runs
//    here ended 16 MiB below it or level); a launch that keeps its input
//    or output adds 16 MiB per launch and crosses it at the third.
//  - the listener: at most 1 MiB. It allocates nothing per connection
//    beyond a pid in a table; 1,000 sessions keeping 1 KiB each cross it.
//  - this process: at most 8 MiB. It allocates with mimalloc too (the
//    engine links it), which by default returns the pages of a freed block
//    25 ms later, when that thread's heap next gets round to it; with 16 MiB
//    blocks passing through several threads here, whole blocks came and
//    went between the baseline and the end (32 MiB below it to 18 MiB
//    above). So the soak has this process return them at once
//    (decommit_delay 0, set in SetUp; the executor keeps its defaults), and
//    then the end was within 1 MiB of the baseline. A large launch that
//    keeps 16 MiB crosses at the first; a tiny launch that keeps 28 B
//    crosses over the 300,000 of them; output buffers themselves are
//    counted exactly (Live, below).
constexpr int64_t SmallConnectionGrowthKiB = 8 * 1024;
constexpr int64_t LargeConnectionGrowthKiB = 40 * 1024;
constexpr int64_t ListenerGrowthKiB = 1024;
constexpr int64_t HostGrowthKiB = 8 * 1024;
constexpr int64_t HostThreadSlack = 4;
constexpr auto SettleTime = std::chrono::seconds(10);

// --- Counts (at scale 1) ----------------------------------------------------

constexpr int64_t TinyLaunches = 100000; // per strategy
constexpr int64_t LargeLaunches = 1000;
constexpr int64_t OpenCloseCycles = 1000;
constexpr int64_t FailedLaunches = 1000; // per strategy, spread over its faults

constexpr int64_t TinyBytes = 8;
constexpr int64_t LargeBytes = 16 * MiB;
// Inputs of failed launches: a kept output of this size shows at once.
constexpr int64_t FailedBytes = 1 * MiB;

// Tiny and large launches are compared with the same kernel run here every
// so many launches (and on the first).
constexpr int64_t TinyCheckEvery = 997;
constexpr int64_t LargeCheckEvery = 97;

const Strategy AllStrategies[] = {Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive};

enum class Fault {
  BadDescriptor, // an input of negative size: the host refuses it before sending
  RefusedByHost, // the host's output allocator returns null: the output is dropped
  InvalidOutput, // the kernel returns an output of negative size (bad_output.c)
  MissingEntry,  // no such entry symbol in the object
};

const char *faultName(Fault F) {
  switch (F) {
  case Fault::BadDescriptor:
    return "bad_descriptor";
  case Fault::RefusedByHost:
    return "refused_by_host";
  case Fault::InvalidOutput:
    return "invalid_output";
  case Fault::MissingEntry:
    return "missing_entry";
  }
  return "?";
}

// Every strategy frees what a failed launch had allocated, on both sides.
constexpr Fault AllFaults[] = {Fault::BadDescriptor, Fault::MissingEntry, Fault::RefusedByHost,
                               Fault::InvalidOutput};

double soakScale() {
  const char *V = std::getenv("CATALYST_REMOTE_SOAK_SCALE");
  if (!V || !*V)
    return 1.0;
  char *End = nullptr;
  double Scale = std::strtod(V, &End);
  return *End || !(Scale > 0) ? -1.0 : Scale;
}

bool injected(const std::string &What) {
  const char *V = std::getenv("CATALYST_REMOTE_SOAK_INJECT");
  if (!V)
    return false;
  std::string List = std::string(",") + V + ",";
  return List.find("," + What + ",") != std::string::npos;
}

// Output buffers come from here: malloc, counted, or none while Refuse is
// set. Live is how many the session handed over and nobody freed yet.
std::atomic<bool> Refuse{false};
std::atomic<int64_t> Live{0};

void *soakAllocate(size_t Bytes) {
  if (Refuse)
    return nullptr;
  void *P = std::malloc(Bytes);
  if (P)
    ++Live;
  return P;
}

void soakRelease(void *P) {
  if (!P)
    return;
  --Live;
  std::free(P);
}

SessionOptions soakOptions(Strategy S) {
  SessionOptions O;
  O.Strategy = S;
  O.Outputs = {&soakAllocate, &soakRelease};
  return O;
}

// One process's figures.
struct Sample {
  int64_t RssKiB = -1, Fds = -1, Threads = -1;
};

Sample sample(pid_t Pid) {
  return {residentKiB(Pid), openFdCount(Pid), threadCount(Pid)};
}

// A process the soak watches.
struct Probe {
  std::string Name;
  pid_t Pid;
  int64_t RssBoundKiB;
  int64_t ThreadSlack; // threads the end may have beyond the baseline
  Sample Base, End;

  bool settled() const { return End.Fds == Base.Fds && End.Threads <= Base.Threads + ThreadSlack; }
};

// Launches map_r1_e1 (u8[n] -> u8[n]) on In, checks the output against the
// same kernel run here when Check is set, and frees it.
::testing::AssertionResult mapLaunch(Session &S, Input &In, bool Check) {
  Desc Out(1, 1);
  MemrefArg InArg{In.D.data(), 1, 1}, OutArg{Out.data(), 1, 1};
  std::string Entry = remoteEntry("map_r1_e1");
  if (auto Err = S.launch({Entry, "map.o", InArg, OutArg}))
    return ::testing::AssertionFailure() << "map: " << llvm::toString(std::move(Err));
  ::testing::AssertionResult R = ::testing::AssertionSuccess();
  if (Out.size(0) != In.D.size(0))
    R = ::testing::AssertionFailure() << "map returned " << Out.size(0) << " elements";
  else if (Check) {
    Desc Local(1, 1);
    void *Av[] = {In.D.data()};
    hostEntry("map", "map_r1_e1")(Local.data(), Av);
    if (Local.values() != Out.values())
      R = ::testing::AssertionFailure() << "map output differs from the local kernel's";
    std::free(Local.allocated());
  }
  soakRelease(Out.allocated());
  return R;
}

// A launch failing with F: it must fail, say why, and leave no output.
::testing::AssertionResult failedLaunch(Session &S, Input &In, Fault F) {
  Desc Bad = In.D;
  Desc Out(1, 1), Second(1, 1);
  MemrefArg InArg{In.D.data(), 1, 1};
  std::vector<MemrefArg> Outs = {{Out.data(), 1, 1}};
  std::string Entry = remoteEntry("map_r1_e1"), Object = "map.o", Expected;
  switch (F) {
  case Fault::BadDescriptor:
    Bad.setSize(0, -1);
    InArg.Desc = Bad.data();
    Expected = "input 0";
    break;
  case Fault::RefusedByHost:
    Expected = "cannot allocate";
    break;
  case Fault::InvalidOutput:
    Entry = remoteEntry("bad_output");
    Object = "bad_output.o";
    Outs.push_back({Second.data(), 1, 1});
    Expected = "output 1";
    break;
  case Fault::MissingEntry:
    Entry = remoteEntry("soak_no_such_entry");
    Expected = Entry;
    break;
  }
  Out.poison();
  Refuse = F == Fault::RefusedByHost;
  llvm::Error Err = S.launch({Entry, Object, InArg, Outs});
  Refuse = false;
  if (!Err) {
    soakRelease(Out.allocated());
    return ::testing::AssertionFailure() << faultName(F) << ": the launch succeeded";
  }
  std::string Text = llvm::toString(std::move(Err));
  if (Text.find(Expected) == std::string::npos)
    return ::testing::AssertionFailure()
           << faultName(F) << ": the error does not mention \"" << Expected << "\": " << Text;
  if (!Out.allZero())
    return ::testing::AssertionFailure() << faultName(F) << ": the output was not zeroed";
  return ::testing::AssertionSuccess();
}

class SoakTest : public ::testing::Test {
protected:
  void SetUp() override {
#ifdef CATALYST_REMOTE_SANITIZED
    GTEST_SKIP() << "resident memory is not comparable under a sanitizer";
#endif
    // See HostGrowthKiB.
    mi_option_set(mi_option_decommit_delay, 0);
    Scale = soakScale();
    ASSERT_GT(Scale, 0) << "CATALYST_REMOTE_SOAK_SCALE must be a positive number";
    // A thousand sessions log two lines each: keep them out of the output.
    ExecutorOptions EO;
    EO.LogPath = "soak-executor.log";
    ASSERT_TRUE(Exec.start(EO));
    std::mt19937_64 Rng(2026);
    Tiny = makeInput(Layout::Dense, {TinyBytes}, 1, Rng);
    Large = makeInput(Layout::Dense, {LargeBytes}, 1, Rng);
    Failing = makeInput(Layout::Dense, {FailedBytes}, 1, Rng);
    Probes.push_back({"host", ::getpid(), HostGrowthKiB, HostThreadSlack, {}, {}});
    Probes.push_back({"listener", Exec.pid(), ListenerGrowthKiB, 0, {}, {}});
    for (Strategy S : AllStrategies) {
      ASSERT_NO_FATAL_FAILURE(
          openKept(S, std::string("conn_") + strategyName(S), SmallConnectionGrowthKiB));
      Small.push_back(Kept.back().get());
    }
    ASSERT_NO_FATAL_FAILURE(openKept(Strategy::ZeroCopy, "conn_large", LargeConnectionGrowthKiB));
    LargeSession = Kept.back().get();
    Watched = Kept.size();
  }

  // Opens a session kept for the whole soak, links its kernels, and
  // watches its connection process.
  void openKept(Strategy S, const std::string &Name, int64_t BoundKiB) {
    std::vector<pid_t> Before = Exec.connectionPids(), After;
    auto Sess = openSession(Exec.address(), soakOptions(S));
    ASSERT_TRUE(Sess);
    ASSERT_EQ(Sess->strategy(), S);
    for (const char *K : {"map", "bad_output"})
      ASSERT_FALSE(Sess->sendBinary(kernelObject(K), BinaryFormat::Object));
    ASSERT_TRUE(Exec.waitForConnections(Before.size() + 1, After, std::chrono::seconds(5)));
    for (pid_t P : After)
      if (std::find(Before.begin(), Before.end(), P) == Before.end())
        Probes.push_back({Name, P, BoundKiB, 0, {}, {}});
    Kept.push_back(std::move(Sess));
  }

  int64_t scaled(int64_t N, int64_t Min = 1) const {
    return std::max<int64_t>(Min, std::llround(double(N) * Scale));
  }

  // Prints one phase's figures when Report is set.
  void report(bool Report, const char *Phase, const char *Strat, int64_t N,
              Clock::time_point Start) {
    if (!Report)
      return;
    double Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
    std::printf("soak phase=%s strategy=%s count=%lld seconds=%.2f per_second=%.1f\n", Phase, Strat,
                static_cast<long long>(N), Seconds, Seconds > 0 ? double(N) / Seconds : 0.0);
    std::fflush(stdout);
  }

  // Every phase once, at Fraction of its count; figures printed if Report.
  void runAll(double Fraction, bool Report) {
    auto Count = [&](int64_t N, int64_t Min) { return scaled(llround(double(N) * Fraction), Min); };

    int64_t N = Count(LargeLaunches, 4);
    auto Start = Clock::now();
    for (int64_t I = 0; I < N; ++I)
      ASSERT_TRUE(mapLaunch(*LargeSession, *Large, I % LargeCheckEvery == 0)) << "large " << I;
    report(Report, "large_16MiB", "zerocopy", N, Start);

    for (size_t K = 0; K < Small.size(); ++K) {
      const char *Strat = strategyName(AllStrategies[K]);
      N = Count(TinyLaunches, 100);
      Start = Clock::now();
      for (int64_t I = 0; I < N; ++I)
        ASSERT_TRUE(mapLaunch(*Small[K], *Tiny, I % TinyCheckEvery == 0)) << Strat << " " << I;
      report(Report, "tiny_8B", Strat, N, Start);

      std::vector<Fault> Faults(std::begin(AllFaults), std::end(AllFaults));
      N = Count(FailedLaunches, 25 * int64_t(Faults.size()));
      Start = Clock::now();
      for (int64_t I = 0; I < N; ++I)
        ASSERT_TRUE(failedLaunch(*Small[K], *Failing, Faults[I % Faults.size()]))
            << Strat << " " << I;
      report(Report, "failed", Strat, N, Start);
      // The session goes on after all of them.
      ASSERT_TRUE(mapLaunch(*Small[K], *Tiny, true));
    }

    N = Count(OpenCloseCycles, 4);
    Start = Clock::now();
    for (int64_t I = 0; I < N; ++I) {
      auto S = openSession(Exec.address(), soakOptions(Strategy::ZeroCopy));
      ASSERT_TRUE(S) << "cycle " << I;
      ASSERT_FALSE(S->sendBinary(kernelObject("map"), BinaryFormat::Object));
      ASSERT_TRUE(mapLaunch(*S, *Tiny, false)) << "cycle " << I;
      ASSERT_FALSE(S->close());
    }
    report(Report, "open_close", "zerocopy", N, Start);
  }

  // Waits until the closed sessions' processes are gone and reaped, and
  // until each probe's descriptors and threads are back to Base (when
  // given), at most SettleTime; then samples every probe into End.
  ::testing::AssertionResult settle(bool CompareWithBase) {
    auto Deadline = Clock::now() + SettleTime;
    for (;;) {
      bool Done = Exec.connectionPids().size() == Watched && zombiesOf(Exec.pid()).empty();
      std::string Unsettled;
      for (Probe &P : Probes) {
        P.End = sample(P.Pid);
        if (CompareWithBase && !P.settled())
          Unsettled += " " + P.Name;
      }
      Done = Done && Unsettled.empty();
      if (Done)
        return ::testing::AssertionSuccess();
      if (Clock::now() > Deadline)
        return ::testing::AssertionFailure()
               << "not settled after " << SettleTime.count()
               << " s: " << Exec.connectionPids().size() << " connection processes (expected "
               << Watched << "), " << zombiesOf(Exec.pid()).size() << " zombies"
               << (Unsettled.empty() ? "" : "; descriptors or threads off the baseline in:")
               << Unsettled;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // The leaks CATALYST_REMOTE_SOAK_INJECT asks for, to see the bounds fail.
  void inject() {
    if (injected("host-rss")) {
      char *P = static_cast<char *>(std::malloc(64 * MiB));
      std::memset(P, 1, 64 * MiB);
      InjectedMemory = P;
    }
    if (injected("host-fd"))
      InjectedFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (injected("host-thread"))
      for (int64_t I = 0; I <= HostThreadSlack; ++I)
        InjectedThreads.emplace_back([this] {
          while (!StopInjected)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        });
    std::vector<std::pair<const char *, const char *>> Remote;
    if (injected("exec-rss"))
      Remote.push_back({"leak", "leak"});
    if (injected("exec-fd"))
      Remote.push_back({"soak_leaks", "leak_fd"});
    if (injected("exec-thread"))
      Remote.push_back({"soak_leaks", "leak_thread"});
    // Into every connection process the soak watches. leak() keeps 1 MiB
    // per launch, more than any bound above; the others one descriptor or
    // thread each.
    for (auto &Sess : Kept)
      for (auto [File, Entry] : Remote) {
        ASSERT_FALSE(Sess->sendBinary(kernelObject(File), BinaryFormat::Object));
        for (int I = 0; I < (std::string(Entry) == "leak" ? 48 : 1); ++I)
          ASSERT_FALSE(Sess->launch({remoteEntry(Entry), std::string(File) + ".o", {}, {}}));
      }
    // An output nobody frees.
    if (injected("host-output")) {
      Desc Out(1, 1);
      MemrefArg InArg{Tiny->D.data(), 1, 1}, OutArg{Out.data(), 1, 1};
      ASSERT_FALSE(Small[0]->launch({remoteEntry("map_r1_e1"), "map.o", InArg, OutArg}));
      InjectedOutput = Out.allocated();
    }
    // A session left open: one more connection process, and its socket and
    // threads here.
    if (injected("open-session"))
      Kept.push_back(openSession(Exec.address(), soakOptions(Strategy::ZeroCopy)));
  }

  void TearDown() override {
    StopInjected = true;
    for (std::thread &T : InjectedThreads)
      T.join();
    if (InjectedFd >= 0)
      ::close(InjectedFd);
    std::free(InjectedMemory);
    soakRelease(InjectedOutput);
    for (auto &S : Kept)
      EXPECT_FALSE(S->close());
  }

  double Scale = 1;
  ExecutorProcess Exec;
  std::unique_ptr<Input> Tiny, Large, Failing;
  std::vector<std::unique_ptr<Session>> Kept;
  std::vector<Session *> Small; // one per strategy, as AllStrategies
  Session *LargeSession = nullptr;
  size_t Watched = 0; // connection processes that must remain: the kept sessions'
  std::vector<Probe> Probes;
  void *InjectedMemory = nullptr;
  void *InjectedOutput = nullptr;
  int InjectedFd = -1;
  std::vector<std::thread> InjectedThreads;
  std::atomic<bool> StopInjected{false};
};

TEST_F(SoakTest, LaunchesSessionsAndFailuresLeaveNothingBehind) {
  auto Start = Clock::now();
  std::printf("soak-begin scale=%g\n", Scale);
  // The warm-up: a tenth of every count.
  ASSERT_NO_FATAL_FAILURE(runAll(0.1, false));
  ASSERT_TRUE(settle(false));
  for (Probe &P : Probes) {
    P.Base = P.End;
    ASSERT_GT(P.Base.RssKiB, 0) << "cannot read /proc/" << P.Pid << "/status (" << P.Name << ")";
    ASSERT_GE(P.Base.Fds, 0) << "cannot read /proc/" << P.Pid << "/fd (" << P.Name << ")";
  }
  ASSERT_NO_FATAL_FAILURE(runAll(1.0, true));
  ASSERT_NO_FATAL_FAILURE(inject());
  auto Settled = settle(true);

  for (const Probe &P : Probes)
    std::printf(
        "soak process=%s rss_kib_base=%lld rss_kib_end=%lld rss_kib_growth=%lld "
        "rss_kib_bound=%lld fds_base=%lld fds_end=%lld threads_base=%lld "
        "threads_end=%lld\n",
        P.Name.c_str(), static_cast<long long>(P.Base.RssKiB), static_cast<long long>(P.End.RssKiB),
        static_cast<long long>(P.End.RssKiB - P.Base.RssKiB), static_cast<long long>(P.RssBoundKiB),
        static_cast<long long>(P.Base.Fds), static_cast<long long>(P.End.Fds),
        static_cast<long long>(P.Base.Threads), static_cast<long long>(P.End.Threads));
  std::printf("soak-end seconds=%.1f live_outputs=%lld zombies=%zu\n",
              std::chrono::duration<double>(Clock::now() - Start).count(),
              static_cast<long long>(Live.load()), zombiesOf(Exec.pid()).size());
  std::fflush(stdout);

  EXPECT_TRUE(Settled);
  EXPECT_EQ(Live.load(), 0) << "output buffers handed over and never freed";
  EXPECT_TRUE(zombiesOf(Exec.pid()).empty()) << "the listener left connection processes unreaped";
  for (const Probe &P : Probes) {
    SCOPED_TRACE(P.Name + " (pid " + std::to_string(P.Pid) + ")");
    EXPECT_LE(P.End.RssKiB - P.Base.RssKiB, P.RssBoundKiB)
        << "resident memory went from " << P.Base.RssKiB << " KiB to " << P.End.RssKiB << " KiB";
    EXPECT_EQ(P.End.Fds, P.Base.Fds) << "open file descriptors";
    EXPECT_LE(P.End.Threads, P.Base.Threads + P.ThreadSlack) << "threads";
  }
}

// The control for the zombie check: a child of this process that exited
// and is not reaped yet must show up, and go once reaped.
TEST(SoakProbeTest, ZombiesAreSeen) {
  pid_t Child = ::fork();
  ASSERT_GE(Child, 0);
  if (Child == 0)
    ::_exit(0);
  auto Deadline = Clock::now() + std::chrono::seconds(5);
  std::vector<pid_t> Zombies;
  while ((Zombies = zombiesOf(::getpid())).empty() && Clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(Zombies, std::vector<pid_t>{Child});
  EXPECT_EQ(::waitpid(Child, nullptr, 0), Child);
  EXPECT_TRUE(zombiesOf(::getpid()).empty());
}

// The control for the descriptor and thread counts: one more of each shows.
TEST(SoakProbeTest, DescriptorsAndThreadsAreCounted) {
  // ThreadSanitizer's runtime starts a thread of its own with the process's
  // first; one started and joined first keeps it out of the count below.
  std::thread([] {}).join();
  Sample Before = sample(::getpid());
  int Fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(Fd, 0);
  std::atomic<bool> Stop{false};
  std::thread T([&] {
    while (!Stop)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  Sample During = sample(::getpid());
  Stop = true;
  T.join();
  ::close(Fd);
  EXPECT_EQ(During.Fds, Before.Fds + 1);
  EXPECT_EQ(During.Threads, Before.Threads + 1);
  EXPECT_EQ(sample(::getpid()).Fds, Before.Fds);
}

} // namespace
