//===- BenchEnv.h - What catalyst-remote-bench's benchmarks share -*- C++ -*-===//

#ifndef CATALYST_REMOTE_BENCH_BENCHENV_H
#define CATALYST_REMOTE_BENCH_BENCHENV_H

#include "ListeningChild.h"
#include "Median.h"
#include "MemrefR1.h"
#include "Pinning.h"
#include "RawPeer.h"
#include "catalyst/remote/Session.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace catalyst::remote::bench {

constexpr uint64_t KiB = uint64_t(1) << 10;
constexpr uint64_t MiB = uint64_t(1) << 20;
constexpr uint64_t GiB = uint64_t(1) << 30;

// Kernel objects built next to the benchmark (see CMakeLists.txt).
inline const char *const IdentityKernel = CATALYST_REMOTE_BENCH_KERNEL_DIR "/identity.o";
inline const char *const ScaleKernel = CATALYST_REMOTE_BENCH_KERNEL_DIR "/scale.o";
inline const char *const ForwardKernel = CATALYST_REMOTE_BENCH_KERNEL_DIR "/forward.o";
inline const char *const SweepKernel = CATALYST_REMOTE_BENCH_KERNEL_DIR "/sweep.o";

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

// Launches Entry of Object on one dense rank-1 input of Elements elements
// of ElemSize bytes; Out receives the output, which the caller frees.
llvm::Error launchR1(Session &S, llvm::StringRef Entry, llvm::StringRef Object, void *In,
                     int64_t Elements, size_t ElemSize, MemrefR1 &Out);

// Launches scale.o's "scale" on In (f64, rank 1, not empty); returns the
// seconds it took, its output checked at both ends and the middle and freed.
llvm::Expected<double> launchScale(Session &S, std::vector<double> &In);

// Members are destroyed bottom-up: sessions close before their executor stops.
struct BenchEnv {
  CpuPlan Pins;
  // Executor binary for the executors this benchmark starts; empty when it
  // was built without one and CATALYST_REMOTE_EXECUTOR is unset.
  std::string ExecutorPath;
  // CATALYST_REMOTE_ADDRESS, split at commas; empty when we start our own.
  std::vector<std::string> Given;
  std::unique_ptr<tools::ListeningChild> Executor; // null when using a running one
  // The executor the launch and memory benchmarks use.
  std::string Address;
  // More executors on loopback, started when a fan-out needs them.
  std::vector<std::unique_ptr<tools::ListeningChild>> Extra;
  std::unique_ptr<RawPeer> Peer;
  // The same raw exchange over a Unix socket, when the peer is ours.
  std::unique_ptr<RawPeer> LocalPeer;
  // Sessions over TCP, one per strategy.
  std::map<Strategy, std::unique_ptr<Session>> Sessions;
  // A zero-copy session over the executor's local socket and shared
  // memory; null, with the reason in NoShared, when there is none (an
  // executor on another machine or in another network namespace).
  std::unique_ptr<Session> Shared;
  std::string NoShared;

  // 0 when the executor is not ours to inspect.
  pid_t executorPid() const { return Executor ? Executor->pid() : 0; }
};

// Starts an executor of the benchmark's own on loopback, with Args added to
// its command line, placed as the first one was (see Pinning.h).
llvm::Expected<std::unique_ptr<tools::ListeningChild>>
startLocalExecutor(const BenchEnv &Env, const std::vector<std::string> &Args = {});

// Addresses of K distinct executors: the first K given ones when
// CATALYST_REMOTE_ADDRESS lists that many, else K on loopback, started and
// placed (see Pinning.h) as the first one was. Local says which.
llvm::Expected<std::vector<std::string>> executorsFor(BenchEnv &Env, unsigned K, bool &Local);

// The transfer strategies compared, in the order they are reported.
constexpr Strategy Strategies[] = {Strategy::Naive, Strategy::Batched, Strategy::ZeroCopy};

// A session using Transfer over Over (no fallback accepted) with Objects
// linked. Outputs come back in malloc'ed buffers, released with free().
llvm::Expected<std::unique_ptr<Session>> openSession(const std::string &Address, Strategy Transfer,
                                                     llvm::ArrayRef<const char *> Objects,
                                                     TransportKind Over = TransportKind::Tcp);

// Skips the run and makes the benchmark exit non-zero.
void fail(benchmark::State &State, llvm::Error Err);
// Skips the run with a reason; not a failure.
void skip(benchmark::State &State, const std::string &Why);
bool anyFailed();

// Seconds one exchange on Link took, sending Out.
llvm::Expected<double> timeRaw(RawLink &Link, const char *Out);
// The medians of the launches' phases (Stats.h) as <phase>_us counters.
void reportPhases(benchmark::State &State, const std::vector<PhaseTimes> &All);

// Checks that Out holds Want alone, the parameter a sweep launch was given
// (ResidentBench.cpp), and frees it.
llvm::Error takeParameter(MemrefR1 &Out, int64_t Want);

void registerTransferBenchmarks(BenchEnv &Env);
void registerKernelBenchmarks(BenchEnv &Env);
void registerFanoutBenchmarks(BenchEnv &Env);
void registerMemoryBenchmarks(BenchEnv &Env);
void registerAuthBenchmarks(BenchEnv &Env);
void registerTraceBenchmarks(BenchEnv &Env);
void registerWireBenchmarks(BenchEnv &Env);
void registerPoolBenchmarks(BenchEnv &Env);
void registerResidentBenchmarks(BenchEnv &Env);
void registerPackBenchmarks();
// Seconds to open a session with O and close it again.
llvm::Expected<double> openClose(const std::string &Address, const SessionOptions &O);
// Launches of forward.o with Bytes each way (one rank-1 input) on Plain
// and on Other (both have it linked), taking turns at going first, and
// reports their medians (plain_us, OtherCounter) and Other's ratio to
// Plain (ratio_to_plain). Each session's first launch is untimed and
// checks every byte.
void compareLaunches(benchmark::State &State, Session &Plain, Session &Other,
                     const char *OtherCounter, uint64_t Bytes = 8);

// Which benchmarks run without --benchmark_filter (TransferBench.cpp
// documents the regexes and what each set takes).
struct Preset {
  const char *Name;   // quick, default, full
  const char *Filter; // a --benchmark_filter regex
};
llvm::ArrayRef<Preset> presets();
const Preset &defaultPreset();
// One "NAME REGEX" line per preset.
void printPresets(llvm::raw_ostream &OS);

// Skips the run unless MemAvailable is at least Needed bytes; says so in
// the results. Returns true when it skipped.
bool skipUnlessMemory(benchmark::State &State, uint64_t Needed, const std::string &What);

// The host-memory measurement runs in a fresh process of this binary so no
// earlier benchmark's memory counts against it: main() hands over to it
// when argv[1] is HostPeakChildFlag.
inline const char *const HostPeakChildFlag = "--host-peak-child";
int runHostPeakChild(int Argc, char **Argv);

} // namespace catalyst::remote::bench

#endif
