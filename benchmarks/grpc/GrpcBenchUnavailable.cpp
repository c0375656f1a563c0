//===- GrpcBenchUnavailable.cpp - The gRPC baseline, built without gRPC ---===//
//
// CMake did not find all gRPC needs: catalyst-remote-bench still links and
// runs, without the baseline, and says once what was missing.
//
//===----------------------------------------------------------------------===//

#include "GrpcBench.h"

#include <cstdio>

namespace catalyst::remote::bench {

void registerGrpcBenchmarks() {
  std::fprintf(stderr,
               "catalyst-remote-bench: built without the gRPC baseline, no grpc/ benchmarks: "
               "missing %s (install, then reconfigure)\n",
               CATALYST_REMOTE_GRPC_MISSING);
}

bool grpcBenchmarksFailed() {
  return false;
}

} // namespace catalyst::remote::bench
