//===- MemoryBench.cpp - What launches cost in resident memory ------------===//
//
// memory/host_peak: how much host memory one 1 GiB-in, 1 GiB-out zero-copy
// launch of the identity kernel needs beyond the caller's own two buffers,
// and how much the executor's connection process needs beyond its slab.
// It runs in a fresh process of this binary, so nothing an earlier
// benchmark allocated (or a peak it reached) counts.
//
// memory/executor_rss: whether the executor's connection process grows
// with the number of launches when every launch returns a freshly
// allocated 1 MiB output (the scale kernel).
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "ProcStatus.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

using Figures = std::vector<std::pair<std::string, double>>;

constexpr uint64_t HostPeakBytes = GiB; // per direction
// Input, output, the executor's copy and socket buffers, with room to spare.
constexpr uint64_t HostPeakNeeds = 5 * GiB;

Error noFigure(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "cannot read " + What + " from /proc");
}

Expected<uint64_t> status(pid_t Pid, const char *Field) {
  if (auto Bytes = statusBytes(Pid, Field))
    return *Bytes;
  return noFigure(Twine(Field) + " of " + (Pid ? Twine(Pid) : Twine("this process")));
}

//===-- memory/host_peak, the child's side ---------------------------------===//

// What the child measures around the big launch.
struct HostPeak {
  uint64_t RssAtStart = 0, RssBeforeInput = 0, HwmAfterLaunch = 0;
  double LaunchSeconds = 0;
  LaunchStats Stats;
  pid_t Connection = 0;
  uint64_t ExecRssBefore = 0, ExecHwmAfter = 0;
};

// The session is open, the kernel linked and a small launch done before
// the baseline is read: what a session costs whatever it moves is not what
// this measures.
Error warmUp(Session &S) {
  std::vector<char> Small(4 * KiB, 1);
  MemrefR1 Out;
  Error Err = launchR1(S, "identity", IdentityKernel, Small.data(), int64_t(Small.size()), 1, Out);
  std::free(Out.Allocated);
  return Err;
}

Error bigLaunch(Session &S, HostPeak &P) {
  char *In = static_cast<char *>(std::malloc(HostPeakBytes));
  if (!In)
    return createStringError(std::errc::not_enough_memory, "cannot allocate the 1 GiB input");
  // Touched, so all of it is resident before the launch, as a caller's data is.
  std::memset(In, 0x5a, HostPeakBytes);
  In[0] = 1;
  In[HostPeakBytes - 1] = 2;
  MemrefR1 Out;
  auto Start = Clock::now();
  Error Err = launchR1(S, "identity", IdentityKernel, In, int64_t(HostPeakBytes), 1, Out);
  P.LaunchSeconds = secondsSince(Start);
  // Read while the output is still held: it is one of the two buffers.
  if (auto Hwm = status(0, "VmHWM"))
    P.HwmAfterLaunch = *Hwm;
  else
    Err = joinErrors(std::move(Err), Hwm.takeError());
  if (!Err && (Out.Sizes[0] != int64_t(HostPeakBytes) ||
               std::memcmp(static_cast<char *>(Out.Aligned) + Out.Offset, In, HostPeakBytes)))
    Err = createStringError(inconvertibleErrorCode(), "the 1 GiB output differs from the input");
  std::free(Out.Allocated);
  std::free(In);
  return Err;
}

Error readExecutorAfter(HostPeak &P) {
  if (!P.Connection)
    return Error::success();
  auto Hwm = status(P.Connection, "VmHWM");
  if (!Hwm)
    return Hwm.takeError();
  P.ExecHwmAfter = *Hwm;
  return Error::success();
}

Expected<HostPeak> measureHostPeak(const std::string &Address, pid_t Executor) {
  HostPeak P;
  P.RssAtStart = statusBytes(0, "VmRSS").value_or(0);
  std::vector<pid_t> Before = Executor ? childrenOf(Executor) : std::vector<pid_t>();
  auto S = openSession(Address, Strategy::ZeroCopy, {IdentityKernel});
  if (!S)
    return S.takeError();
  P.Connection = Executor ? newChildOf(Executor, Before) : 0;
  if (auto Err = warmUp(**S))
    return Err;
  auto Rss = status(0, "VmRSS");
  if (!Rss)
    return Rss.takeError();
  P.RssBeforeInput = *Rss;
  if (P.Connection) {
    auto ExecRss = status(P.Connection, "VmRSS");
    if (!ExecRss)
      return ExecRss.takeError();
    P.ExecRssBefore = *ExecRss;
  }
  if (auto Err = bigLaunch(**S, P))
    return Err;
  P.Stats = (*S)->stats().Last;
  if (auto Err = readExecutorAfter(P))
    return Err;
  if (auto Err = (*S)->close())
    return Err;
  return P;
}

// Host: the peak over the resident set the warm session had, beyond the
// caller's input and output (2 GiB), as a fraction of those buffers.
// Executor: its connection process's peak over its resident set before the
// launch, beyond the slab the input was placed in, as a fraction of it.
Figures figuresOf(const HostPeak &P) {
  double Buffers = 2.0 * double(HostPeakBytes);
  Figures F = {
      {"launch_s", P.LaunchSeconds},
      {"rss_at_start_MiB", bytesToMiB(P.RssAtStart)},
      {"rss_before_input_MiB", bytesToMiB(P.RssBeforeInput)},
      {"host_hwm_after_MiB", bytesToMiB(P.HwmAfterLaunch)},
      {"host_peak_over_buffers",
       (double(P.HwmAfterLaunch) - double(P.RssBeforeInput) - Buffers) / Buffers},
      {"round_trips", double(P.Stats.RoundTrips)},
      {"host_copy_bytes", double(P.Stats.HostCopyBytes)},
      {"executor_copy_bytes", double(P.Stats.ExecutorCopyBytes)},
  };
  if (P.Connection) {
    double Slab = double(P.Stats.SlabInUse);
    F.push_back({"executor_rss_before_MiB", bytesToMiB(P.ExecRssBefore)});
    F.push_back({"executor_hwm_MiB", bytesToMiB(P.ExecHwmAfter)});
    F.push_back({"executor_slab_MiB", bytesToMiB(P.Stats.SlabInUse)});
    F.push_back({"executor_peak_over_slab",
                 (double(P.ExecHwmAfter) - double(P.ExecRssBefore) - Slab) / Slab});
  }
  return F;
}

//===-- memory/host_peak, the parent's side --------------------------------===//

Expected<std::string> readAll(int Fd) {
  std::string Text;
  char Buf[4096];
  for (;;) {
    ssize_t N = ::read(Fd, Buf, sizeof(Buf));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return createStringError(std::error_code(errno, std::generic_category()),
                               "reading the host-peak child's report");
    if (N == 0)
      return Text;
    Text.append(Buf, size_t(N));
  }
}

// Runs this binary as the host-peak child; its stdout is "name value" lines.
Expected<std::string> runChild(const BenchEnv &Env) {
  int Fds[2];
  if (::pipe2(Fds, O_CLOEXEC) != 0)
    return createStringError(std::error_code(errno, std::generic_category()), "pipe");
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_adddup2(&Actions, Fds[1], STDOUT_FILENO);
  std::string Exe = "/proc/self/exe", Pid = std::to_string(Env.executorPid());
  std::string Address = Env.Address;
  char *Argv[] = {Exe.data(), const_cast<char *>(HostPeakChildFlag), Address.data(), Pid.data(),
                  nullptr};
  pid_t Child = -1;
  int Rc = ::posix_spawn(&Child, Exe.c_str(), &Actions, nullptr, Argv, environ);
  posix_spawn_file_actions_destroy(&Actions);
  ::close(Fds[1]);
  if (Rc != 0) {
    ::close(Fds[0]);
    return createStringError(std::error_code(Rc, std::generic_category()),
                             "cannot start the host-peak child");
  }
  auto Text = readAll(Fds[0]);
  ::close(Fds[0]);
  int Status = 0;
  ::waitpid(Child, &Status, 0);
  if (Text && !(WIFEXITED(Status) && WEXITSTATUS(Status) == 0))
    return createStringError(inconvertibleErrorCode(),
                             "the host-peak child failed (its error is on stderr)");
  return Text;
}

Figures parseFigures(const std::string &Text) {
  Figures F;
  std::istringstream In(Text);
  std::string Name;
  double Value;
  while (In >> Name >> Value)
    F.push_back({Name, Value});
  return F;
}

void runHostPeak(benchmark::State &State, BenchEnv &Env) {
  auto Avail = memAvailable();
  if (!Avail || *Avail < HostPeakNeeds)
    return skip(State, "skipped: MemAvailable is " +
                           (Avail ? std::to_string(*Avail >> 20) + " MiB" : "unknown") +
                           ", a 1 GiB-each-way launch needs 5 GiB");
  for (auto _ : State) {
    auto Text = runChild(Env);
    if (!Text)
      return fail(State, Text.takeError());
    for (auto &[Name, Value] : parseFigures(*Text)) {
      if (Name == "launch_s")
        State.SetIterationTime(Value);
      else
        State.counters[Name] = Value;
    }
  }
}

//===-- memory/executor_rss ------------------------------------------------===//

constexpr int64_t GrowthLaunches = 1000, GrowthEarly = 10;
constexpr uint64_t GrowthBytes = MiB;

// The executor frees a launch's output after sending it, so just after the
// host has it the free may still be under way; a short pause lets it land.
Expected<uint64_t> settledRss(pid_t Pid) {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return status(Pid, "VmRSS");
}

struct Growth {
  uint64_t RssEarly = 0, RssLate = 0;
  std::vector<double> Seconds;
};

Error launchMany(Session &S, pid_t Connection, Growth &G) {
  std::vector<double> In(GrowthBytes / sizeof(double));
  for (size_t I = 0; I < In.size(); ++I)
    In[I] = double(I);
  for (int64_t I = 1; I <= GrowthLaunches; ++I) {
    auto T = launchScale(S, In);
    if (!T)
      return T.takeError();
    G.Seconds.push_back(*T);
    if (I != GrowthEarly && I != GrowthLaunches)
      continue;
    auto Rss = settledRss(Connection);
    if (!Rss)
      return Rss.takeError();
    (I == GrowthEarly ? G.RssEarly : G.RssLate) = *Rss;
  }
  return Error::success();
}

// The pool reserves SessionOptions::SlabInitial and replaces it only for a
// launch that does not fit, so the reservation is the larger of the two.
uint64_t slabReserved(const LaunchStats &L) {
  return std::max(SessionOptions().SlabInitial, L.SlabHighWater);
}

void reportGrowth(benchmark::State &State, const Growth &G, const LaunchStats &L) {
  auto &C = State.counters;
  C["rss_after_10_MiB"] = bytesToMiB(G.RssEarly);
  C["rss_after_1000_MiB"] = bytesToMiB(G.RssLate);
  C["growth_MiB"] = (double(G.RssLate) - double(G.RssEarly)) / double(MiB);
  C["slab_MiB"] = bytesToMiB(slabReserved(L));
  C["slab_in_use_MiB"] = bytesToMiB(L.SlabInUse);
  C["launch_us"] = median(G.Seconds) * 1e6;
}

void runExecutorGrowth(benchmark::State &State, BenchEnv &Env) {
  pid_t Executor = Env.executorPid();
  if (!Executor)
    return skip(State, "skipped: the executor was not started by this benchmark");
  std::vector<pid_t> Before = childrenOf(Executor);
  auto S = openSession(Env.Address, Strategy::ZeroCopy, {ScaleKernel});
  if (!S)
    return fail(State, S.takeError());
  pid_t Connection = newChildOf(Executor, Before);
  if (!Connection)
    return fail(State, createStringError(inconvertibleErrorCode(),
                                         "cannot tell the session's connection process"));
  for (auto _ : State) {
    Growth G;
    if (auto Err = launchMany(**S, Connection, G))
      return fail(State, std::move(Err));
    double Total = 0;
    for (double T : G.Seconds)
      Total += T;
    State.SetIterationTime(Total);
    reportGrowth(State, G, (*S)->stats().Last);
  }
  if (auto Err = (*S)->close())
    fail(State, std::move(Err));
}

} // namespace

int runHostPeakChild(int Argc, char **Argv) {
  if (Argc != 4) {
    errs() << "usage: catalyst-remote-bench " << HostPeakChildFlag << " HOST:PORT EXECUTOR_PID\n";
    return 2;
  }
  auto P = measureHostPeak(Argv[2], pid_t(std::atol(Argv[3])));
  if (!P) {
    errs() << "catalyst-remote-bench (host-peak child): " << toString(P.takeError()) << "\n";
    return 1;
  }
  for (auto &[Name, Value] : figuresOf(*P))
    outs() << Name << " " << format("%.9g", Value) << "\n";
  return 0;
}

void registerMemoryBenchmarks(BenchEnv &Env) {
  benchmark::RegisterBenchmark("memory/host_peak/zerocopy_1GiB",
                               [&Env](benchmark::State &S) { runHostPeak(S, Env); })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("memory/executor_rss/zerocopy_scale_1MiB",
                               [&Env](benchmark::State &S) { runExecutorGrowth(S, Env); })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

} // namespace catalyst::remote::bench
