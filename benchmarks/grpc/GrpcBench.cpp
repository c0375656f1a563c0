//===- GrpcBench.cpp - The gRPC baseline in catalyst-remote-bench ---------===//
//
// Each grpc/SIZE benchmark opens a client of its own (one connection),
// warms it up with two untimed calls, then times one call per iteration.
// Like the launches it compares with, a call starts from the caller's bytes
// and ends with the output in a fresh buffer (the reply message).
//
//===----------------------------------------------------------------------===//

#include "GrpcBench.h"

#include "../Pinning.h"
#include "GrpcCases.h"
#include "KernelClient.h"
#include "ListeningChild.h"

#include <atomic>
#include <benchmark/benchmark.h>
#include <cstdlib>

namespace catalyst::remote::bench {

namespace {

using namespace grpcbench;

constexpr auto StartTimeout = std::chrono::seconds(10);

// Where the server runs and how to reach it. A static: the server it
// started is stopped when the benchmark exits.
struct GrpcEnv {
  int ServerCpu = -1; // -1: the scheduler decides
  std::string PlanError;
  bool Tried = false;
  std::unique_ptr<tools::ListeningChild> Server; // null when using a running one
  std::string Address;
  std::string StartError;
};

GrpcEnv &env() {
  static GrpcEnv E;
  return E;
}

std::atomic<bool> Failed{false};

void fail(benchmark::State &State, const std::string &Why) {
  Failed = true;
  State.SkipWithError(("gRPC baseline: " + Why).c_str());
}

// The executor's CPU in the benchmark's plan.
void placeServer(GrpcEnv &E) {
  auto Plan = planCpus();
  if (!Plan) {
    E.PlanError = llvm::toString(Plan.takeError());
    return;
  }
  E.ServerCpu = Plan->How == CpuPlan::None ? -1 : Plan->Peers;
}

void startServer(GrpcEnv &E) {
  if (const char *Address = std::getenv("CATALYST_REMOTE_GRPC_ADDRESS")) {
    E.Address = Address;
    return;
  }
  if (!E.PlanError.empty()) {
    E.StartError = E.PlanError;
    return;
  }
  const char *Path = std::getenv("CATALYST_REMOTE_GRPC_SERVER");
  tools::ChildSpec Spec{{Path ? Path : CATALYST_REMOTE_GRPC_SERVER_PATH, "--listen", "127.0.0.1:0"},
                        {},
                        E.ServerCpu,
                        StartTimeout};
  E.Server = tools::ListeningChild::start(Spec, E.StartError);
  if (E.Server)
    E.Address = E.Server->address();
}

// Started once, by the first benchmark that needs it: a run that lists the
// benchmarks or filters these out starts nothing.
const std::string &serverAddress(std::string &Error) {
  GrpcEnv &E = env();
  if (!E.Tried) {
    E.Tried = true;
    startServer(E);
  }
  Error = E.StartError;
  return E.Address;
}

std::string describeServer(const GrpcEnv &E) {
  if (const char *Address = std::getenv("CATALYST_REMOTE_GRPC_ADDRESS"))
    return std::string("a running server at ") + Address;
  std::string Where = E.ServerCpu < 0 ? "any CPU" : "CPU " + std::to_string(E.ServerCpu);
  return "catalyst-remote-grpc-server on 127.0.0.1, " + Where + ", sync unary calls";
}

void report(benchmark::State &State, const std::vector<double> &Seconds, uint64_t Bytes,
            const WireBytes &PerCall) {
  double Median = median(Seconds);
  auto &C = State.counters;
  C["launch_us"] = Median * 1e6;
  C["GBps"] = 2.0 * double(Bytes) / Median / 1e9;
  C["bytes_sent"] = double(PerCall.Sent);
  C["bytes_received"] = double(PerCall.Received);
}

void runGrpc(benchmark::State &State, uint64_t Bytes) {
  std::string Error = payloadTooLarge(Bytes);
  if (!Error.empty())
    return State.SkipWithError(Error.c_str());
  const std::string &Address = serverAddress(Error);
  if (!Error.empty())
    return fail(State, Error);
  auto Client = KernelClient::connect(Address, StartTimeout, Error);
  if (!Client)
    return fail(State, Error);
  std::vector<char> In = makePayload(Bytes);
  WireBytes PerCall;
  if (Error = Client->warmUp(In.data(), Bytes, PerCall); !Error.empty())
    return fail(State, Error);
  std::vector<double> Seconds;
  for (auto _ : State) {
    double T = 0;
    if (Error = Client->call(In.data(), Bytes, Check::Ends, T); !Error.empty())
      return fail(State, Error);
    State.SetIterationTime(T);
    Seconds.push_back(T);
  }
  report(State, Seconds, Bytes, PerCall);
}

} // namespace

void registerGrpcBenchmarks() {
  GrpcEnv &E = env();
  placeServer(E);
  for (const SizeCase &Size : Sizes) {
    uint64_t Bytes = Size.Bytes;
    benchmark::RegisterBenchmark((std::string("grpc/") + Size.Label).c_str(),
                                 [Bytes](benchmark::State &S) { runGrpc(S, Bytes); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(iterationsFor(Bytes));
  }
  benchmark::AddCustomContext(GrpcBaselineContext,
                              std::string("built with gRPC ") + CATALYST_REMOTE_GRPC_VERSION);
  benchmark::AddCustomContext("grpc_server", describeServer(E));
}

bool grpcBenchmarksFailed() {
  return Failed;
}

} // namespace catalyst::remote::bench
