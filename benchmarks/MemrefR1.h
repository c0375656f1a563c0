//===- MemrefR1.h - A rank-1 memref descriptor ------------------*- C++ -*-===//
//
// The descriptor of a dense rank-1 memref, as Catalyst lays it out; the
// same for every element type. The benchmark and the gRPC server build it
// to call kernels directly.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_MEMREFR1_H
#define CATALYST_REMOTE_BENCH_MEMREFR1_H

#include <cstdint>

namespace catalyst::remote::bench {

struct MemrefR1 {
  void *Allocated;
  void *Aligned;
  int64_t Offset;
  int64_t Sizes[1];
  int64_t Strides[1];
};

} // namespace catalyst::remote::bench

#endif
