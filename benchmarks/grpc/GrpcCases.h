//===- GrpcCases.h - What the gRPC baseline measures ------------*- C++ -*-===//
//
// The sizes and sample counts of the gRPC baseline, shared by the benchmark
// and the probe so both measure the same thing. They follow the launch
// benchmarks' (TransferBench.cpp): the same sizes per direction and as many
// samples, which keeps a run within a few minutes on two cores.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_GRPC_GRPCCASES_H
#define CATALYST_REMOTE_BENCH_GRPC_GRPCCASES_H

#include "../Median.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace catalyst::remote::grpcbench {

constexpr uint64_t KiB = uint64_t(1) << 10;
constexpr uint64_t MiB = uint64_t(1) << 20;
constexpr uint64_t GiB = uint64_t(1) << 30;

struct SizeCase {
  const char *Label;
  uint64_t Bytes; // per direction
};
constexpr SizeCase Sizes[] = {{"8B", 8},     {"4KiB", 4 * KiB},   {"64KiB", 64 * KiB},
                              {"1MiB", MiB}, {"16MiB", 16 * MiB}, {"256MiB", 256 * MiB}};

// Small calls are bound by latency and vary most, large ones by bandwidth.
inline int64_t iterationsFor(uint64_t Bytes) {
  if (Bytes <= 4 * KiB)
    return 1000;
  if (Bytes <= 64 * KiB)
    return 300;
  if (Bytes <= MiB)
    return 100;
  if (Bytes <= 16 * MiB)
    return 15;
  return Bytes <= 256 * MiB ? 7 : 3;
}

// A payload whose bytes differ from their neighbours, so a reply shifted or
// cut short does not pass the check of its ends.
inline std::vector<char> makePayload(uint64_t Bytes) {
  std::vector<char> P(Bytes);
  for (uint64_t I = 0; I < Bytes; ++I)
    P[I] = char(I * 131 + 7);
  return P;
}

using bench::median;

} // namespace catalyst::remote::grpcbench

#endif
