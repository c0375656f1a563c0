/*===- same_name_b.c - The other object exporting the same entry ---------===*\
 *
 * same_name(in: i32[n]) -> out: i32[n] = in * 10 (see same_name_a.c).
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

void ENTRY(same_name)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t n = mr_sizes(in)[0];
  int32_t *buf = mr_alloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i)
    buf[i] = (int32_t)(*(uint32_t *)mr_at(in, 1, 4, &i) * 10u); /* wraps, defined */
  mr_set_dense(mr_output(rv, 0), 1, buf, mr_sizes(in));
}
