//===- Bench.cpp - catalyst-remote-bench: launch cost against the link ----===//
//
// Measures a whole launch (inputs to the executor, the kernel, outputs back
// into fresh host buffers) of a sample kernel on a local executor, next to a
// raw TCP echo of the same bytes, so the launch's overhead over the link is
// visible per tensor size.
//
// Environment:
//   CATALYST_REMOTE_EXECUTOR  executor binary to start (default: the built one)
//   CATALYST_REMOTE_ADDRESS   host:port of a running executor to use instead
//
//===----------------------------------------------------------------------===//

#include "EchoServer.h"
#include "ExecutorProcess.h"
#include "catalyst/remote/Session.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace llvm;
using namespace catalyst::remote;

namespace {

constexpr size_t MiB = size_t(1) << 20;

// Iterations are fixed so the whole run stays well under a minute on two
// cores; the large sizes are dominated by bandwidth and vary little.
struct TensorSize {
  const char *Label;
  size_t Bytes; // per direction
  int64_t Iterations;
};
constexpr TensorSize Sizes[] = {
    {"8B", 8, 2000}, {"1MiB", MiB, 200}, {"64MiB", 64 * MiB, 10}, {"256MiB", 256 * MiB, 5}};

constexpr const char *KernelEntry = "scale";

struct MemrefF64R1 {
  double *Allocated;
  double *Aligned;
  int64_t Offset;
  int64_t Sizes[1];
  int64_t Strides[1];
};

// What every benchmark shares: one executor, one session, one echo link.
// Members are destroyed bottom-up, so the session closes before its executor
// is stopped.
struct BenchEnv {
  std::unique_ptr<bench::ExecutorProcess> Executor;
  std::unique_ptr<Session> S;
  std::unique_ptr<bench::EchoServer> Echo;
  std::string Kernel = CATALYST_REMOTE_BENCH_KERNEL;
};

// Google Benchmark reports skipped runs but still exits 0; we must not.
std::atomic<bool> AnyFailed{false};

void fail(benchmark::State &State, Error Err) {
  AnyFailed = true;
  State.SkipWithError(toString(std::move(Err)).c_str());
}

std::vector<double> makeInput(size_t Bytes) {
  std::vector<double> V(Bytes / sizeof(double));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = double(I % 1000003);
  return V;
}

Error wrongOutput(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "scale returned " + What);
}

// Checking every element costs as much as the launch for big tensors, so the
// timed loop checks the ends and the warm-up launch checks everything.
Error checkScaled(const std::vector<double> &In, const MemrefF64R1 &Out, bool Everything) {
  size_t N = In.size();
  if (Out.Sizes[0] != int64_t(N) || !Out.Aligned)
    return wrongOutput(Twine(Out.Sizes[0]) + " elements, expected " + Twine(N));
  for (size_t I = 0; I < N; I = (Everything || I + 1 == N) ? I + 1 : N - 1)
    if (Out.Aligned[I] != 2 * In[I])
      return wrongOutput("a wrong value at element " + Twine(I));
  return Error::success();
}

Error launchScale(BenchEnv &Env, std::vector<double> &In, bool CheckEverything) {
  MemrefF64R1 InDesc{In.data(), In.data(), 0, {int64_t(In.size())}, {1}};
  MemrefF64R1 OutDesc{};
  MemrefArg InArg{&InDesc, 1, sizeof(double)};
  MemrefArg OutArg{&OutDesc, 1, sizeof(double)};
  LaunchCall Call;
  Call.Entry = KernelEntry;
  Call.Object = Env.Kernel;
  Call.Inputs = InArg;
  Call.Outputs = OutArg;
  if (auto Err = Env.S->launch(Call))
    return Err;
  Error Check = checkScaled(In, OutDesc, CheckEverything);
  std::free(OutDesc.Allocated); // outputs come back in malloc'ed host buffers
  return Check;
}

// Bytes moved per iteration count both directions, as both cross the link.
void reportThroughput(benchmark::State &State, size_t Bytes) {
  State.SetBytesProcessed(State.iterations() * int64_t(2 * Bytes));
  State.counters["GB/s"] =
      benchmark::Counter(2.0 * double(Bytes) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void runLaunch(benchmark::State &State, BenchEnv &Env, size_t Bytes) {
  std::vector<double> In = makeInput(Bytes);
  // Untimed: the first launch of an entry also resolves its symbol.
  if (auto Err = launchScale(Env, In, /*CheckEverything=*/true))
    return fail(State, std::move(Err));
  for (auto _ : State)
    if (auto Err = launchScale(Env, In, /*CheckEverything=*/false))
      return fail(State, std::move(Err));
  reportThroughput(State, Bytes);
}

void runEcho(benchmark::State &State, BenchEnv &Env, size_t Bytes) {
  std::vector<char> Out(Bytes, 'x'), In(Bytes);
  if (auto Err = Env.Echo->roundTrip(Out.data(), In.data(), Bytes))
    return fail(State, std::move(Err));
  for (auto _ : State) {
    if (auto Err = Env.Echo->roundTrip(Out.data(), In.data(), Bytes))
      return fail(State, std::move(Err));
    benchmark::DoNotOptimize(In.data());
  }
  reportThroughput(State, Bytes);
}

// Echo before launch at each size, so the two lines to compare are adjacent.
void registerAll(BenchEnv &Env) {
  for (const TensorSize &Size : Sizes) {
    size_t Bytes = Size.Bytes;
    std::string Label = Size.Label;
    benchmark::RegisterBenchmark(("tcp_echo/" + Label).c_str(),
                                 [&Env, Bytes](benchmark::State &S) { runEcho(S, Env, Bytes); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(Size.Iterations);
    benchmark::RegisterBenchmark(("launch/" + Label).c_str(),
                                 [&Env, Bytes](benchmark::State &S) { runLaunch(S, Env, Bytes); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(Size.Iterations);
  }
}

Expected<std::string> executorAddress(BenchEnv &Env) {
  if (const char *Addr = std::getenv("CATALYST_REMOTE_ADDRESS"))
    return std::string(Addr);
  const char *Path = std::getenv("CATALYST_REMOTE_EXECUTOR");
  std::string Exe = Path ? Path : CATALYST_REMOTE_EXECUTOR_PATH;
  if (Exe.empty())
    return createStringError(inconvertibleErrorCode(),
                             "built without catalyst-remote-executor: set "
                             "CATALYST_REMOTE_EXECUTOR or CATALYST_REMOTE_ADDRESS");
  auto P = bench::ExecutorProcess::start(Exe, std::chrono::seconds(10));
  if (!P)
    return P.takeError();
  Env.Executor = std::move(*P);
  return Env.Executor->address();
}

Error setUp(BenchEnv &Env) {
  auto Address = executorAddress(Env);
  if (!Address)
    return Address.takeError();
  // Stated rather than defaulted: launchScale() releases outputs with free().
  SessionOptions Options;
  Options.Outputs = OutputAllocator{std::malloc, std::free};
  auto S = Session::open(*Address, Options);
  if (!S)
    return S.takeError();
  Env.S = std::move(*S);
  if (auto Err = Env.S->sendBinary(Env.Kernel, BinaryFormat::Object))
    return Err;
  auto Echo = bench::EchoServer::start();
  if (!Echo)
    return Echo.takeError();
  Env.Echo = std::move(*Echo);
  benchmark::AddCustomContext("executor", *Address);
  return Error::success();
}

// Listing the benchmarks (as tools/bench does to show progress) needs no
// executor. Google Benchmark consumes its flags, so look before it does.
bool onlyListing(int argc, char **argv) {
  for (int I = 1; I < argc; ++I) {
    StringRef Arg(argv[I]);
    if (Arg.consume_front("--benchmark_list_tests") &&
        (Arg.empty() || Arg == "=true" || Arg == "=1"))
      return true;
  }
  return false;
}

} // namespace

int main(int argc, char **argv) {
  bool Listing = onlyListing(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 2;
  BenchEnv Env;
  registerAll(Env);
  if (Listing) {
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }
  if (auto Err = setUp(Env)) {
    errs() << "catalyst-remote-bench: " << toString(std::move(Err)) << "\n";
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (auto Err = Env.S->close()) {
    errs() << "catalyst-remote-bench: closing the session: " << toString(std::move(Err)) << "\n";
    return 1;
  }
  return AnyFailed ? 1 : 0;
}
