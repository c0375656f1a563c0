/*===- kernel_abi.h - What test kernels share ------------------*- C -*-===*\
 *
 * Test kernels follow Catalyst's pyface ABI: `void entry(void *rv, void *av)`
 * where av is an array of pointers to input descriptors and rv holds the
 * output descriptors end to end. A descriptor is
 *   { void *allocated; void *aligned; int64_t offset;
 *     int64_t sizes[rank]; int64_t strides[rank]; }
 * so kernels here view it through one struct with a flexible tail and take
 * the rank as a parameter; the entries fix it.
 *
 * Every kernel source is compiled twice: into an object shipped to the
 * executor (KERNEL_PREFIX=_catalyst_pyface_) and into the test binary
 * (KERNEL_PREFIX=host_<file>_), so the same code can run on both sides.
 *
\*===----------------------------------------------------------------------===*/

#ifndef CATALYST_REMOTE_TESTS_KERNEL_ABI_H
#define CATALYST_REMOTE_TESTS_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef KERNEL_PREFIX
#error "KERNEL_PREFIX must name the entry prefix"
#endif

#define KERNEL_CONCAT2(A, B) A##B
#define KERNEL_CONCAT(A, B) KERNEL_CONCAT2(A, B)
#define ENTRY(NAME) KERNEL_CONCAT(KERNEL_PREFIX, NAME)

/* MLIR's marker for a memref pointing at a constant global. */
#define CONSTANT_GLOBAL_MARKER ((void *)(uintptr_t)0xdeadbeef)

#define KERNEL_MAX_RANK 8

typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t dims[]; /* sizes[rank], then strides[rank] */
} memref_t;

static inline int64_t *mr_sizes(memref_t *m) {
  return m->dims;
}
static inline int64_t *mr_strides(memref_t *m, int rank) {
  return m->dims + rank;
}

/* Input I of av. */
static inline memref_t *mr_input(void *av, int i) {
  return ((memref_t **)av)[i];
}

/* The output that starts `slots` 8-byte slots into rv. */
static inline memref_t *mr_output(void *rv, int slots) {
  return (memref_t *)((int64_t *)rv + slots);
}

static inline int mr_slots(int rank) {
  return 3 + 2 * rank;
}

static inline int64_t mr_count(memref_t *m, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= m->dims[d];
  return n;
}

/* The element at idx, counting offset and strides in elements. */
static inline char *mr_at(memref_t *m, int rank, size_t esize, const int64_t *idx) {
  int64_t off = m->offset;
  for (int d = 0; d < rank; ++d)
    off += idx[d] * m->dims[rank + d];
  return (char *)m->aligned + off * (int64_t)esize;
}

/* Steps idx through sizes in row-major order. */
static inline void mr_next(int64_t *idx, const int64_t *sizes, int rank) {
  for (int d = rank - 1; d >= 0; --d) {
    if (++idx[d] < sizes[d])
      return;
    idx[d] = 0;
  }
}

/* MLIR-compiled code never hands back a null buffer, even for no elements. */
static inline void *mr_alloc(size_t bytes) {
  return malloc(bytes ? bytes : 1);
}

/* Points out at buf, a dense row-major array of the given sizes. */
static inline void mr_set_dense(memref_t *out, int rank, void *buf, const int64_t *sizes) {
  out->allocated = buf;
  out->aligned = buf;
  out->offset = 0;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    out->dims[d] = sizes[d];
    out->dims[rank + d] = stride;
    stride *= sizes[d] > 0 ? sizes[d] : 1;
  }
}

/* For each rank 0..4 and element size 1, 2, 4, 8, 16. */
/* clang-format off */
#define FOR_RANKS_AND_SIZES(M)                                                                     \
  M(0, 1) M(0, 2) M(0, 4) M(0, 8) M(0, 16)                                                         \
  M(1, 1) M(1, 2) M(1, 4) M(1, 8) M(1, 16)                                                         \
  M(2, 1) M(2, 2) M(2, 4) M(2, 8) M(2, 16)                                                         \
  M(3, 1) M(3, 2) M(3, 4) M(3, 8) M(3, 16)                                                         \
  M(4, 1) M(4, 2) M(4, 4) M(4, 8) M(4, 16)
/* clang-format on */

#endif
