/*===- constant.c - An output that is a constant global ------------------===*\
 *
 * constant(in: i32[n]) -> (table: i32[2][3], twice: i32[n])
 * table points at a static constant global with allocated set to MLIR's
 * marker 0xdeadbeef: nobody may free it, and the host still gets a fresh
 * buffer of its values. twice is an ordinary buffer (in * 2) so that a launch
 * mixes both kinds.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

static const int32_t Table[2][3] = {{11, -22, 33}, {-44, 55, 0x7fffffff}};

void ENTRY(constant)(void *rv, void *av) {
  memref_t *table = mr_output(rv, 0);
  int64_t sizes[2] = {2, 3};
  mr_set_dense(table, 2, (void *)Table, sizes);
  table->allocated = CONSTANT_GLOBAL_MARKER;

  memref_t *in = mr_input(av, 0);
  int64_t n = mr_sizes(in)[0];
  int32_t *buf = mr_alloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i)
    buf[i] = (int32_t)(2u * *(uint32_t *)mr_at(in, 1, 4, &i)); /* wraps, defined */
  mr_set_dense(mr_output(rv, mr_slots(2)), 1, buf, mr_sizes(in));
}
