//===- GrpcBench.h - The gRPC baseline in catalyst-remote-bench -*- C++ -*-===//
//
// grpc/SIZE: one gRPC unary call carrying SIZE bytes each way to a gRPC
// server that runs the launch benchmarks' identity kernel, which is what a
// user would otherwise reach for. Reported: launch_us (the median call),
// GBps (both directions, as for launches), and bytes_sent and
// bytes_received, what one call put on the wire (TCP payload: HTTP/2
// framing, headers and flow control included, retransmissions not).
//
// Environment:
//   CATALYST_REMOTE_GRPC_ADDRESS  host:port of a running
//                                 catalyst-remote-grpc-server to use instead
//   CATALYST_REMOTE_GRPC_SERVER   server binary to start (default: the built one)
//   CATALYST_REMOTE_BENCH_PIN     places the server where the executor goes
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_GRPC_GRPCBENCH_H
#define CATALYST_REMOTE_BENCH_GRPC_GRPCBENCH_H

namespace catalyst::remote::bench {

// The results' context entry saying whether the baseline was built: "built
// with gRPC VERSION", or "not built: missing WHAT" naming what CMake did not
// find (with the Debian package that brings it).
inline const char *const GrpcBaselineContext = "grpc_baseline";

// Registers grpc/SIZE for the launch benchmarks' sizes. It starts nothing:
// the first grpc benchmark to run starts the server, which stops at exit.
// Call it before the benchmark pins itself to one CPU, as the other
// register functions are called: the server's CPU comes from the CPUs the
// process may use then. Built without gRPC, it registers nothing and says
// so on stderr. Either way it sets GrpcBaselineContext.
void registerGrpcBenchmarks();

// Whether a grpc benchmark failed: Google Benchmark exits 0 regardless.
bool grpcBenchmarksFailed();

} // namespace catalyst::remote::bench

#endif
