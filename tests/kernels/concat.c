/*===- concat.c - One to sixteen inputs, one fresh output -----------------===*\
 *
 * concat_<N>(in_0, ..., in_{N-1}: u8[*]) -> out: u8[sum of lengths], N = 0..16
 *   out is the inputs end to end, each byte of input k plus 31 * k + 1, in a
 *   fresh buffer. Inputs may have any length (zero too) and layout, so the
 *   same kernel serves tests that count per-input costs at any N; concat_0
 *   is a launch that needs no executor memory for inputs at all.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

static void concat_kernel(memref_t *out, void *av, int n) {
  int64_t total = 0;
  for (int k = 0; k < n; ++k)
    total += mr_sizes(mr_input(av, k))[0];
  uint8_t *buf = mr_alloc((size_t)total);
  int64_t at = 0;
  for (int k = 0; k < n; ++k) {
    memref_t *in = mr_input(av, k);
    for (int64_t i = 0; i < mr_sizes(in)[0]; ++i)
      buf[at++] = (uint8_t)(*(uint8_t *)mr_at(in, 1, 1, &i) + 31 * k + 1);
  }
  int64_t sizes[1] = {total};
  mr_set_dense(out, 1, buf, sizes);
}

#define CONCAT_ENTRY(N)                                                                            \
  void ENTRY(concat_##N)(void *rv, void *av) {                                                     \
    concat_kernel(mr_output(rv, 0), av, N);                                                        \
  }

CONCAT_ENTRY(0)
CONCAT_ENTRY(1)
CONCAT_ENTRY(2)
CONCAT_ENTRY(3)
CONCAT_ENTRY(4)
CONCAT_ENTRY(5)
CONCAT_ENTRY(6)
CONCAT_ENTRY(7)
CONCAT_ENTRY(8)
CONCAT_ENTRY(9)
CONCAT_ENTRY(10)
CONCAT_ENTRY(11)
CONCAT_ENTRY(12)
CONCAT_ENTRY(13)
CONCAT_ENTRY(14)
CONCAT_ENTRY(15)
CONCAT_ENTRY(16)
