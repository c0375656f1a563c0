//===- GrpcBenchUnavailable.cpp - The gRPC baseline, built without gRPC ---===//
//
// CMake found no gRPC: catalyst-remote-bench still links and runs, without
// the baseline, and says why once.
//
//===----------------------------------------------------------------------===//

#include "GrpcBench.h"

#include <cstdio>

namespace catalyst::remote::bench {

void registerGrpcBenchmarks() {
  std::fprintf(stderr,
               "catalyst-remote-bench: built without gRPC, no grpc/ benchmarks "
               "(apt-get install libgrpc++-dev protobuf-compiler-grpc, then reconfigure)\n");
}

bool grpcBenchmarksFailed() {
  return false;
}

} // namespace catalyst::remote::bench
