/*===- memref_r1.h - A rank-1 memref descriptor, for C -----------*- C -*-===*\
 *
 * The descriptor of a rank-1 memref as Catalyst lays it out, the same for
 * every element type: what the identity kernel hands back and what the C
 * ABI's launch benchmark describes its buffers with (MemrefR1.h is the C++
 * benchmark's).
 *
\*===----------------------------------------------------------------------===*/

#ifndef CATALYST_REMOTE_BENCH_MEMREF_R1_C_H
#define CATALYST_REMOTE_BENCH_MEMREF_R1_C_H

#include <stdint.h>

struct MemrefR1 {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
};

#endif
