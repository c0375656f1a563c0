//===- Bench.cpp - catalyst-remote-bench: launches against the raw link ---===//
//
// Measures launches through each transfer strategy next to raw TCP
// exchanges of the same bytes with a peer process, and what launches cost
// in resident memory on the host and on the executor.
//
// Environment:
//   CATALYST_REMOTE_EXECUTOR  executor binary to start (default: the built one)
//   CATALYST_REMOTE_ADDRESS   host:port of a running executor to use instead
//                             (the raw peer still runs on loopback, and the
//                             executor's memory is then not measured)
//   CATALYST_REMOTE_BENCH_PIN split (default), same or none: see Pinning.h
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "Pinning.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

// Google Benchmark reports skipped runs but still exits 0; a failure must not.
std::atomic<bool> AnyFailed{false};

} // namespace

void fail(benchmark::State &State, Error Err) {
  AnyFailed = true;
  State.SkipWithError(toString(std::move(Err)).c_str());
}

void skip(benchmark::State &State, const std::string &Why) {
  State.SkipWithError(Why.c_str());
}

bool anyFailed() {
  return AnyFailed;
}

double median(std::vector<double> Samples) {
  if (Samples.empty())
    return 0;
  size_t Mid = Samples.size() / 2;
  std::nth_element(Samples.begin(), Samples.begin() + Mid, Samples.end());
  double Upper = Samples[Mid];
  if (Samples.size() % 2)
    return Upper;
  double Lower = *std::max_element(Samples.begin(), Samples.begin() + Mid);
  return (Lower + Upper) / 2;
}

Error launchR1(Session &S, StringRef Entry, StringRef Object, void *In, int64_t Elements,
               size_t ElemSize, MemrefR1 &Out) {
  MemrefR1 InDesc{In, In, 0, {Elements}, {1}};
  Out = {};
  MemrefArg InArg{&InDesc, 1, ElemSize};
  MemrefArg OutArg{&Out, 1, ElemSize};
  return S.launch(LaunchCall{Entry, Object, InArg, OutArg});
}

Expected<std::unique_ptr<Session>> openSession(const std::string &Address, Strategy Transfer,
                                               ArrayRef<const char *> Objects) {
  SessionOptions Options;
  Options.Outputs = OutputAllocator{std::malloc, std::free};
  Options.Transfer = Transfer;
  auto S = Session::open(Address, Options);
  if (!S)
    return S.takeError();
  // A fallback would measure another strategy under this one's name.
  if ((*S)->strategy() != Transfer)
    return createStringError(inconvertibleErrorCode(), "the executor at %s offers %s, not %s",
                             Address.c_str(), strategyName((*S)->strategy()),
                             strategyName(Transfer));
  for (const char *Object : Objects)
    if (auto Err = (*S)->sendBinary(Object, BinaryFormat::Object))
      return Err;
  return S;
}

} // namespace catalyst::remote::bench

using namespace catalyst::remote;
using namespace catalyst::remote::bench;

namespace {

Error startExecutor(BenchEnv &Env) {
  if (const char *Addr = std::getenv("CATALYST_REMOTE_ADDRESS")) {
    Env.Address = Addr;
    return Error::success();
  }
  const char *Path = std::getenv("CATALYST_REMOTE_EXECUTOR");
  std::string Exe = Path ? Path : CATALYST_REMOTE_EXECUTOR_PATH;
  if (Exe.empty())
    return createStringError(inconvertibleErrorCode(),
                             "built without catalyst-remote-executor: set "
                             "CATALYST_REMOTE_EXECUTOR or CATALYST_REMOTE_ADDRESS");
  auto P = ExecutorProcess::start(Exe, std::chrono::seconds(10));
  if (!P)
    return P.takeError();
  Env.Executor = std::move(*P);
  Env.Address = Env.Executor->address();
  return Error::success();
}

// Children inherit the affinity they start with, and the executor's
// connection processes are forked from it later: pinning it pins them.
Error pinHelpers(const BenchEnv &Env, const CpuPlan &Plan) {
  if (Plan.How == CpuPlan::None)
    return Error::success();
  if (auto Err = pinTo(Env.Peer->pid(), Plan.Peers))
    return Err;
  return Env.Executor ? pinTo(Env.Executor->pid(), Plan.Peers) : Error::success();
}

Error setUp(BenchEnv &Env) {
  auto Plan = planCpus();
  if (!Plan)
    return Plan.takeError();
  if (Plan->How != CpuPlan::None)
    if (auto Err = pinTo(0, Plan->Bench))
      return Err;
  // Then, while this process has one thread: the peer is a plain fork.
  auto Peer = RawPeer::start();
  if (!Peer)
    return Peer.takeError();
  Env.Peer = std::move(*Peer);
  if (auto Err = startExecutor(Env))
    return Err;
  if (auto Err = pinHelpers(Env, *Plan))
    return Err;
  benchmark::AddCustomContext("pinning", describe(*Plan));
  for (Strategy S : Strategies) {
    auto Opened = openSession(Env.Address, S, {IdentityKernel});
    if (!Opened)
      return Opened.takeError();
    Env.Sessions[S] = std::move(*Opened);
  }
  benchmark::AddCustomContext("executor", Env.Address);
  benchmark::AddCustomContext("raw_peer", "a forked process on 127.0.0.1, TCP_NODELAY");
  return Error::success();
}

Error closeSessions(BenchEnv &Env) {
  Error Err = Error::success();
  for (auto &[Strat, S] : Env.Sessions)
    Err = joinErrors(std::move(Err), S->close());
  return Err;
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
  if (argc > 1 && StringRef(argv[1]) == HostPeakChildFlag)
    return runHostPeakChild(argc, argv);
  bool Listing = onlyListing(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 2;
  BenchEnv Env;
  registerTransferBenchmarks(Env);
  registerMemoryBenchmarks(Env);
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
  if (auto Err = closeSessions(Env)) {
    errs() << "catalyst-remote-bench: closing the sessions: " << toString(std::move(Err)) << "\n";
    return 1;
  }
  return anyFailed() ? 1 : 0;
}
