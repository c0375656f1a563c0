/*===- reverse.c - Outputs with negative strides -------------------------===*\
 *
 * reverse_r1_e2(in: i16[n]) -> out: i16[n], in reversed, returned as a view
 *   of a copy of in with stride -1 (offset n - 1).
 * reverse_r2_e8(in: i64[m][k]) -> out: i64[m][k], both dimensions reversed
 *   the same way.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

/* Copies in densely and views the copy back to front in every dimension. */
static void reverse_kernel(memref_t *out, memref_t *in, int rank, size_t esize) {
  int64_t n = mr_count(in, rank);
  char *buf = mr_alloc((size_t)n * esize);
  int64_t idx[KERNEL_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; ++i) {
    memcpy(buf + i * (int64_t)esize, mr_at(in, rank, esize, idx), esize);
    mr_next(idx, mr_sizes(in), rank);
  }
  mr_set_dense(out, rank, buf, mr_sizes(in));
  if (n == 0)
    return;
  for (int d = 0; d < rank; ++d) {
    out->offset += (out->dims[d] - 1) * out->dims[rank + d];
    out->dims[rank + d] = -out->dims[rank + d];
  }
}

void ENTRY(reverse_r1_e2)(void *rv, void *av) {
  reverse_kernel(mr_output(rv, 0), mr_input(av, 0), 1, 2);
}

void ENTRY(reverse_r2_e8)(void *rv, void *av) {
  reverse_kernel(mr_output(rv, 0), mr_input(av, 0), 2, 8);
}
