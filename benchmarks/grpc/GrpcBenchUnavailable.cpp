//===- GrpcBenchUnavailable.cpp - The gRPC baseline, built without gRPC ---===//
//
// CMake did not find all gRPC needs: catalyst-remote-bench still links and
// runs, without the baseline, and says what was missing: once on stderr,
// and in the results' context, where tools/bench-report reads it.
//
//===----------------------------------------------------------------------===//

#include "GrpcBench.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <string>

namespace catalyst::remote::bench {

void registerGrpcBenchmarks() {
  std::fprintf(stderr,
               "catalyst-remote-bench: built without the gRPC baseline, no grpc/ benchmarks: "
               "missing %s (install, then reconfigure)\n",
               CATALYST_REMOTE_GRPC_MISSING);
  benchmark::AddCustomContext(GrpcBaselineContext,
                              std::string("not built: missing ") + CATALYST_REMOTE_GRPC_MISSING);
}

bool grpcBenchmarksFailed() {
  return false;
}

} // namespace catalyst::remote::bench
