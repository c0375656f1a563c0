/*===- copy.c - Outputs that are their inputs ------------------------------===*\
 *
 * copy_r<R>_e<E>(in) -> out: in's values, dense in row-major order, in a
 *   fresh buffer: whatever layout in had, out shows whether it was read as
 *   its descriptor says.
 * copy_slow(ms: i64[1], in: u8[n]) -> out: u8[n], in's bytes, after
 *   sleeping ms milliseconds: a launch that moves much and takes long.
 * layout_r2(in: rank 2, any element) -> out: i64[5], in's offset, sizes and
 *   strides: the view of its input the kernel was handed.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <time.h>

static void copy_kernel(memref_t *out, memref_t *in, int rank, size_t esize) {
  int64_t n = mr_count(in, rank);
  char *buf = mr_alloc((size_t)n * esize);
  int64_t idx[KERNEL_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; ++i) {
    memcpy(buf + i * (int64_t)esize, mr_at(in, rank, esize, idx), esize);
    mr_next(idx, mr_sizes(in), rank);
  }
  mr_set_dense(out, rank, buf, mr_sizes(in));
}

#define COPY_ENTRY(R, E)                                                                           \
  void ENTRY(copy_r##R##_e##E)(void *rv, void *av) {                                               \
    copy_kernel(mr_output(rv, 0), mr_input(av, 0), R, E);                                          \
  }
FOR_RANKS_AND_SIZES(COPY_ENTRY)

void ENTRY(copy_slow)(void *rv, void *av) {
  int64_t zero[1] = {0}, ms;
  memcpy(&ms, mr_at(mr_input(av, 0), 1, 8, zero), 8);
  struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0) {
  }
  copy_kernel(mr_output(rv, 0), mr_input(av, 1), 1, 1);
}

void ENTRY(layout_r2)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t *buf = mr_alloc(5 * sizeof(int64_t));
  buf[0] = in->offset;
  for (int d = 0; d < 4; ++d)
    buf[1 + d] = in->dims[d];
  int64_t sizes[1] = {5};
  mr_set_dense(mr_output(rv, 0), 1, buf, sizes);
}
