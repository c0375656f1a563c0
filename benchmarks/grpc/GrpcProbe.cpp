//===- GrpcProbe.cpp - catalyst-remote-grpc-probe: the baseline alone -----===//
//
// Runs the gRPC baseline without Google Benchmark: per size, the median of
// as many calls as catalyst-remote-bench's grpc/SIZE takes, with the server
// placed the same way (CATALYST_REMOTE_BENCH_PIN, see ../Pinning.h).
//
//   catalyst-remote-grpc-probe [--address HOST:PORT] [SIZE...]
//
// SIZE is a byte count with an optional B, KiB, MiB or GiB suffix (default:
// the benchmark's sizes). Without --address (or CATALYST_REMOTE_GRPC_ADDRESS)
// it starts the built server, or CATALYST_REMOTE_GRPC_SERVER, on loopback.
//
//===----------------------------------------------------------------------===//

#include "../Pinning.h"
#include "GrpcCases.h"
#include "KernelClient.h"
#include "ListeningChild.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace catalyst::remote;
using namespace catalyst::remote::grpcbench;

namespace {

constexpr auto StartTimeout = std::chrono::seconds(10);

struct Size {
  std::string Label;
  uint64_t Bytes;
};

bool parseSize(const char *Arg, Size &Out) {
  char *End = nullptr;
  unsigned long long N = std::strtoull(Arg, &End, 10);
  if (End == Arg)
    return false;
  std::string Unit = End;
  uint64_t Scale = Unit == "KiB" ? KiB : Unit == "MiB" ? MiB : Unit == "GiB" ? GiB : 1;
  if (Scale == 1 && !Unit.empty() && Unit != "B")
    return false;
  Out = {Arg, N * Scale};
  return true;
}

struct Options {
  std::string Address;
  std::vector<Size> Sizes;
};

bool parseArgs(int Argc, char **Argv, Options &O) {
  if (const char *Address = std::getenv("CATALYST_REMOTE_GRPC_ADDRESS"))
    O.Address = Address;
  for (int I = 1; I < Argc; ++I) {
    Size S;
    if (std::strcmp(Argv[I], "--address") == 0 && I + 1 < Argc)
      O.Address = Argv[++I];
    else if (parseSize(Argv[I], S))
      O.Sizes.push_back(S);
    else
      return false;
  }
  if (O.Sizes.empty())
    for (const SizeCase &C : grpcbench::Sizes)
      O.Sizes.push_back({C.Label, C.Bytes});
  return true;
}

struct Row {
  int64_t Calls = 0;
  double MedianSeconds = 0;
  WireBytes PerCall;
};

std::string measure(const std::string &Address, uint64_t Bytes, Row &R) {
  std::string Error;
  auto Client = KernelClient::connect(Address, StartTimeout, Error);
  if (!Client)
    return Error;
  std::vector<char> In = makePayload(Bytes);
  if (Error = Client->warmUp(In.data(), Bytes, R.PerCall); !Error.empty())
    return Error;
  std::vector<double> Seconds;
  for (R.Calls = 0; R.Calls < iterationsFor(Bytes); ++R.Calls) {
    double T = 0;
    if (Error = Client->call(In.data(), Bytes, Check::Ends, T); !Error.empty())
      return Error;
    Seconds.push_back(T);
  }
  R.MedianSeconds = median(std::move(Seconds));
  return {};
}

// False when the size failed; a size gRPC cannot carry is skipped.
bool probe(const std::string &Address, const Size &S) {
  if (std::string Why = payloadTooLarge(S.Bytes); !Why.empty()) {
    std::printf("%-8s skipped: %s\n", S.Label.c_str(), Why.c_str());
    return true;
  }
  Row R;
  if (std::string Error = measure(Address, S.Bytes, R); !Error.empty()) {
    std::printf("%-8s failed: %s\n", S.Label.c_str(), Error.c_str());
    return false;
  }
  double GBps = 2.0 * double(S.Bytes) / R.MedianSeconds / 1e9;
  std::printf("%-8s %6" PRId64 " %12.1f %8.3f %12" PRIu64 " %14" PRIu64 "\n", S.Label.c_str(),
              R.Calls, R.MedianSeconds * 1e6, GBps, R.PerCall.Sent, R.PerCall.Received);
  std::fflush(stdout);
  return true;
}

// This process goes where catalyst-remote-bench pins itself.
llvm::Error pinSelf(const bench::CpuPlan &Plan) {
  if (Plan.How == bench::CpuPlan::None)
    return llvm::Error::success();
  return bench::pinTo(0, Plan.Bench);
}

// Places this process as catalyst-remote-bench places itself and returns
// the server's CPU, the executor's (-1: anywhere).
bool placeProcesses(int &ServerCpu) {
  auto Plan = bench::planCpus();
  if (llvm::Error Err = Plan ? pinSelf(*Plan) : Plan.takeError()) {
    std::fprintf(stderr, "catalyst-remote-grpc-probe: %s\n",
                 llvm::toString(std::move(Err)).c_str());
    return false;
  }
  ServerCpu = Plan->How == bench::CpuPlan::None ? -1 : Plan->Peers;
  std::printf("# pinning: %s\n", bench::describe(*Plan).c_str());
  return true;
}

int usage() {
  std::fprintf(stderr, "usage: catalyst-remote-grpc-probe [--address HOST:PORT] [SIZE...]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options O;
  if (!parseArgs(argc, argv, O))
    return usage();
  int ServerCpu = -1;
  if (!placeProcesses(ServerCpu))
    return 1;
  std::unique_ptr<tools::ListeningChild> Server;
  if (O.Address.empty()) {
    const char *Path = std::getenv("CATALYST_REMOTE_GRPC_SERVER");
    std::string Error;
    Server = tools::ListeningChild::start(
        {{Path ? Path : CATALYST_REMOTE_GRPC_SERVER_PATH, "--listen", "127.0.0.1:0"},
         {},
         ServerCpu,
         StartTimeout},
        Error);
    if (!Server) {
      std::fprintf(stderr, "catalyst-remote-grpc-probe: %s\n", Error.c_str());
      return 1;
    }
    O.Address = Server->address();
  }
  std::printf("# server: %s\n", O.Address.c_str());
  std::printf("%-8s %6s %12s %8s %12s %14s\n", "size", "calls", "median_us", "GB/s", "bytes_sent",
              "bytes_received");
  bool Ok = true;
  for (const Size &S : O.Sizes)
    Ok = probe(O.Address, S) && Ok;
  return Ok ? 0 : 1;
}
