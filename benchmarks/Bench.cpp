//===- Bench.cpp - catalyst-remote-bench: launches against the raw link ---===//
//
// Measures launches through each transfer strategy next to raw TCP
// exchanges of the same bytes with a peer process (and, for launches in
// shared memory, raw Unix-socket exchanges and the memory-copy limit),
// a kernel's launches against the same kernel called directly, launches fanned
// out to several executors and spread over a pool of them, and what launches cost in resident
// memory on the host and on the executor.
//
// Usage:
//   catalyst-remote-bench [--quick|--same-host|--full] [BENCHMARK_FLAGS...]
//       without --benchmark_filter, the default preset runs; --quick,
//       --same-host and --full pick the others (TransferBench.cpp describes
//       them)
//   catalyst-remote-bench --list-presets
//       one "NAME REGEX" line per preset
//   catalyst-remote-bench --raw-peer-serve HOST:PORT
//       only the raw TCP peer, until killed, for CATALYST_REMOTE_RAW_PEER
//       (port 0: any; the first stdout line tells where it listens)
//
// Environment:
//   CATALYST_REMOTE_EXECUTOR  executor binary to start (default: the built one)
//   CATALYST_REMOTE_ADDRESS   host:port[,host:port...] of running executors to
//                             use instead: the first for the launch and memory
//                             benchmarks (whose executor figures are then not
//                             measured), the first K for a K-executor fan-out
//                             when it lists that many
//   CATALYST_REMOTE_RAW_PEER  host:port of a raw peer to measure the raw
//                             baselines against, instead of one forked on
//                             127.0.0.1
//   CATALYST_REMOTE_MEMBER_PIDS, CATALYST_REMOTE_RELAY_PIDS  pids of the
//                             executors CATALYST_REMOTE_ADDRESS lists and of
//                             the delay relays before them, in the same
//                             order, for the pool rows' CPU figures
//   CATALYST_REMOTE_LINK      a name for the link, kept in the results'
//                             context as "link"
//   CATALYST_REMOTE_BENCH_PIN split (default), same or none: see Pinning.h
//   CATALYST_REMOTE_TRACE     a trace file the benchmark's one session per
//                             strategy writes to (which then pays for it)
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "DirectKernel.h"
#include "Pinning.h"
#include "ProcStatus.h"
#include "grpc/GrpcBench.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>

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

bool skipUnlessMemory(benchmark::State &State, uint64_t Needed, const std::string &What) {
  auto Avail = memAvailable();
  if (Avail && *Avail >= Needed)
    return false;
  skip(State, "skipped: MemAvailable is " +
                  (Avail ? std::to_string(*Avail >> 20) + " MiB" : "unknown") + ", " + What +
                  " needs about " + std::to_string(Needed >> 20) + " MiB");
  return true;
}

bool anyFailed() {
  return AnyFailed;
}

Error launchR1(Session &S, StringRef Entry, StringRef Object, void *In, int64_t Elements,
               size_t ElemSize, MemrefR1 &Out) {
  MemrefR1 InDesc{In, In, 0, {Elements}, {1}};
  Out = {};
  MemrefArg InArg{&InDesc, 1, ElemSize};
  MemrefArg OutArg{&Out, 1, ElemSize};
  return S.launch(LaunchCall{Entry, Object, InArg, OutArg});
}

Expected<double> launchScale(Session &S, std::vector<double> &In) {
  MemrefR1 Out;
  auto Start = Clock::now();
  if (auto Err =
          launchR1(S, "scale", ScaleKernel, In.data(), int64_t(In.size()), sizeof(double), Out))
    return Err;
  double Seconds = secondsSince(Start);
  const double *Got = static_cast<const double *>(Out.Aligned);
  bool Ok = Out.Sizes[0] == int64_t(In.size()) && Got[0] == 2 * In[0] &&
            Got[In.size() / 2] == 2 * In[In.size() / 2] && Got[In.size() - 1] == 2 * In.back();
  std::free(Out.Allocated);
  if (!Ok)
    return createStringError(inconvertibleErrorCode(), "scale returned wrong values");
  return Seconds;
}

Expected<std::unique_ptr<Session>> openSession(const std::string &Address, Strategy Transfer,
                                               ArrayRef<const char *> Objects, TransportKind Over) {
  SessionOptions Options;
  Options.Outputs = OutputAllocator{std::malloc, std::free};
  Options.Strategy = Transfer;
  Options.Transport = Over;
  // As a program on the C ABI would: a trace of the launches measured,
  // which then pay what tracing costs.
  if (const char *Trace = std::getenv("CATALYST_REMOTE_TRACE"))
    Options.TracePath = Trace;
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

// An executor of the benchmark's own on loopback, so one command measures
// the whole path with nothing set up by hand. What it prints after its
// address is forwarded: a full pipe would block it.
Expected<std::unique_ptr<tools::ListeningChild>>
startLocalExecutor(const BenchEnv &Env, const std::vector<std::string> &Args) {
  if (Env.ExecutorPath.empty())
    return createStringError(inconvertibleErrorCode(),
                             "built without catalyst-remote-executor: set "
                             "CATALYST_REMOTE_EXECUTOR or CATALYST_REMOTE_ADDRESS");
  tools::ChildSpec Spec{{Env.ExecutorPath, "--bind", "127.0.0.1:0"}};
  Spec.Argv.insert(Spec.Argv.end(), Args.begin(), Args.end());
  Spec.ForwardStdout = true;
  // These executors ask no secret; the one in this environment is for the
  // executors tools/bench started, which an executor would take too.
  Spec.Env = {"CATALYST_REMOTE_TOKEN_FILE", "CATALYST_REMOTE_TOKEN"};
  std::string Error;
  auto P = tools::ListeningChild::start(Spec, Error);
  if (!P)
    return createStringError(inconvertibleErrorCode(), Error);
  // Its connection processes are forked from it later and inherit its CPU.
  if (Env.Pins.How != CpuPlan::None)
    if (auto Err = pinTo(P->pid(), Env.Pins.Peers))
      return Err;
  return P;
}

Expected<std::vector<std::string>> executorsFor(BenchEnv &Env, unsigned K, bool &Local) {
  Local = Env.Given.size() < K;
  if (!Local)
    return std::vector<std::string>(Env.Given.begin(), Env.Given.begin() + K);
  // Given executors and local ones are not mixed in one measurement.
  std::vector<std::string> Addresses;
  if (Env.Executor)
    Addresses.push_back(Env.Executor->address());
  for (auto &E : Env.Extra)
    if (Addresses.size() < K)
      Addresses.push_back(E->address());
  while (Addresses.size() < K) {
    auto P = startLocalExecutor(Env);
    if (!P)
      return P.takeError();
    Addresses.push_back((*P)->address());
    Env.Extra.push_back(std::move(*P));
  }
  return Addresses;
}

} // namespace catalyst::remote::bench

using namespace catalyst::remote;
using namespace catalyst::remote::bench;

namespace {

constexpr const char *RawPeerServeFlag = "--raw-peer-serve";

// CATALYST_REMOTE_ADDRESS split at commas; unset or empty: none.
Expected<std::vector<std::string>> givenAddresses() {
  const char *Value = std::getenv("CATALYST_REMOTE_ADDRESS");
  std::vector<std::string> Addresses;
  if (!Value || !*Value)
    return Addresses;
  SmallVector<StringRef, 4> Parts;
  StringRef(Value).split(Parts, ',');
  for (StringRef Part : Parts) {
    if (Part.trim().empty())
      return createStringError(inconvertibleErrorCode(),
                               "CATALYST_REMOTE_ADDRESS '%s' has an empty entry", Value);
    Addresses.push_back(Part.trim().str());
  }
  return Addresses;
}

std::string executorPath() {
  const char *Path = std::getenv("CATALYST_REMOTE_EXECUTOR");
  return Path ? Path : CATALYST_REMOTE_EXECUTOR_PATH;
}

Error startExecutor(BenchEnv &Env) {
  if (!Env.Given.empty()) {
    Env.Address = Env.Given.front();
    return Error::success();
  }
  auto P = startLocalExecutor(Env);
  if (!P)
    return P.takeError();
  Env.Executor = std::move(*P);
  Env.Address = Env.Executor->address();
  return Error::success();
}

// Call while this process has one thread: a local peer is a plain fork.
Error startPeer(BenchEnv &Env) {
  if (const char *Remote = std::getenv("CATALYST_REMOTE_RAW_PEER")) {
    auto Peer = RawPeer::attach(Remote);
    if (!Peer)
      return Peer.takeError();
    Env.Peer = std::move(*Peer);
    return Error::success();
  }
  auto Peer = RawPeer::start();
  if (!Peer)
    return Peer.takeError();
  Env.Peer = std::move(*Peer);
  auto Local = RawPeer::startLocal();
  if (!Local)
    return Local.takeError();
  Env.LocalPeer = std::move(*Local);
  if (Env.Pins.How == CpuPlan::None)
    return Error::success();
  return joinErrors(pinTo(Env.Peer->pid(), Env.Pins.Peers),
                    pinTo(Env.LocalPeer->pid(), Env.Pins.Peers));
}

// The shared-memory session, when the executor offers one here.
void openShared(BenchEnv &Env) {
  auto Opened = openSession(Env.Address, Strategy::ZeroCopy, {ForwardKernel}, TransportKind::Local);
  if (Opened)
    Env.Shared = std::move(*Opened);
  else
    Env.NoShared = toString(Opened.takeError());
}

// Where the figures were taken, in the JSON's context.
void describeLinks(const BenchEnv &Env) {
  // Only processes this benchmark started are placed.
  bool Outside = !Env.Given.empty() || !Env.Peer->pid();
  benchmark::AddCustomContext("pinning",
                              describe(Env.Pins) + (Env.Pins.How != CpuPlan::None && Outside
                                                        ? " (only those this benchmark started)"
                                                        : ""));
  benchmark::AddCustomContext("executor", Env.Address);
  if (Env.Given.size() > 1)
    benchmark::AddCustomContext("executor_addresses", std::getenv("CATALYST_REMOTE_ADDRESS"));
  benchmark::AddCustomContext("raw_peer", Env.Peer->pid()
                                              ? "a forked process on 127.0.0.1, TCP_NODELAY"
                                              : Env.Peer->address() +
                                                    " (CATALYST_REMOTE_RAW_PEER), TCP_NODELAY");
  if (Env.LocalPeer)
    benchmark::AddCustomContext("raw_unix_peer", "a forked process on the abstract Unix socket " +
                                                     Env.LocalPeer->address());
  const char *Link = std::getenv("CATALYST_REMOTE_LINK");
  bool AllLocal = Env.Given.empty() && Env.Peer->pid();
  benchmark::AddCustomContext("link", Link && *Link ? Link : AllLocal ? "loopback" : "unnamed");
}

Error setUp(BenchEnv &Env) {
  auto Plan = planCpus();
  if (!Plan)
    return Plan.takeError();
  Env.Pins = *Plan;
  auto Given = givenAddresses();
  if (!Given)
    return Given.takeError();
  Env.Given = std::move(*Given);
  Env.ExecutorPath = executorPath();
  if (Env.Pins.How != CpuPlan::None)
    if (auto Err = pinTo(0, Env.Pins.Bench))
      return Err;
  if (auto Err = startPeer(Env))
    return Err;
  if (auto Err = startExecutor(Env))
    return Err;
  describeLinks(Env);
  for (Strategy S : Strategies) {
    auto Opened = openSession(Env.Address, S, {ForwardKernel});
    if (!Opened)
      return Opened.takeError();
    Env.Sessions[S] = std::move(*Opened);
  }
  openShared(Env);
  benchmark::AddCustomContext("shared_memory", Env.Shared ? "offered by the executor, used by "
                                                            "the launch/local rows"
                                                          : Env.NoShared);
  return Error::success();
}

Error closeSessions(BenchEnv &Env) {
  Error Err = Error::success();
  for (auto &[Strat, S] : Env.Sessions)
    Err = joinErrors(std::move(Err), S->close());
  if (Env.Shared)
    Err = joinErrors(std::move(Err), Env.Shared->close());
  return Err;
}

bool hasArg(int argc, char **argv, StringRef Flag) {
  for (int I = 1; I < argc; ++I)
    if (Flag == argv[I])
      return true;
  return false;
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

// Takes --quick or --full out of argv, before Google Benchmark sees them.
Expected<const Preset *> takePresetFlag(int &argc, char **argv) {
  const Preset *Asked = nullptr;
  int Kept = 1;
  for (int I = 1; I < argc; ++I) {
    StringRef Arg(argv[I]);
    const Preset *This = nullptr;
    for (const Preset &P : presets())
      if (Arg == "--" + std::string(P.Name) && &P != &defaultPreset())
        This = &P;
    if (This && Asked && This != Asked)
      return createStringError(
          inconvertibleErrorCode(),
          "more than one preset flag (--quick, --same-host, --full): give one");
    Asked = This ? This : Asked;
    if (!This)
      argv[Kept++] = argv[I];
  }
  argc = Kept;
  argv[argc] = nullptr;
  return Asked;
}

// After Initialize: no filter means the asked-for or default preset; a
// filter and a preset flag must agree. Returns the preset's name, or
// "custom".
Expected<std::string> applyPreset(const Preset *Asked) {
  std::string Filter = benchmark::GetBenchmarkFilter();
  if (Filter.empty()) {
    const Preset &P = Asked ? *Asked : defaultPreset();
    benchmark::SetBenchmarkFilter(P.Filter);
    return std::string(P.Name);
  }
  if (Asked && Filter != Asked->Filter)
    return createStringError(inconvertibleErrorCode(),
                             "--%s and --benchmark_filter select different benchmarks: give one",
                             Asked->Name);
  for (const Preset &P : presets())
    if (Filter == P.Filter)
      return std::string(P.Name);
  return std::string("custom");
}

int serveMode(int argc, char **argv) {
  if (argc != 3) {
    errs() << "usage: catalyst-remote-bench " << RawPeerServeFlag << " HOST:PORT\n";
    return 2;
  }
  return serveRawPeer(argv[2]);
}

// Parses the command line; returns an exit status when there is nothing
// to run.
std::optional<int> initialize(int &argc, char **argv) {
  if (hasArg(argc, argv, "--list-presets")) {
    printPresets(outs());
    return 0;
  }
  auto Asked = takePresetFlag(argc, argv);
  if (!Asked) {
    errs() << "catalyst-remote-bench: " << toString(Asked.takeError()) << "\n";
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 2;
  auto Name = applyPreset(*Asked);
  if (!Name) {
    errs() << "catalyst-remote-bench: " << toString(Name.takeError()) << "\n";
    return 2;
  }
  benchmark::AddCustomContext("preset", *Name);
  benchmark::AddCustomContext("benchmark_filter", benchmark::GetBenchmarkFilter());
  return std::nullopt;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && StringRef(argv[1]) == HostPeakChildFlag)
    return runHostPeakChild(argc, argv);
  if (argc > 1 && StringRef(argv[1]) == DirectKernelChildFlag)
    return runDirectKernelChild(argc, argv);
  if (argc > 1 && StringRef(argv[1]) == RawPeerServeFlag)
    return serveMode(argc, argv);
  bool Listing = onlyListing(argc, argv);
  if (auto Status = initialize(argc, argv))
    return *Status;
  BenchEnv Env;
  registerTransferBenchmarks(Env);
  registerKernelBenchmarks(Env);
  registerFanoutBenchmarks(Env);
  registerMemoryBenchmarks(Env);
  registerAuthBenchmarks(Env);
  registerTraceBenchmarks(Env);
  registerWireBenchmarks(Env);
  registerPoolBenchmarks(Env);
  registerResidentBenchmarks(Env);
  registerPackBenchmarks();
  registerGrpcBenchmarks();
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
  return anyFailed() || grpcBenchmarksFailed() ? 1 : 0;
}
