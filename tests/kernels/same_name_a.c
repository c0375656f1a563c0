/*===- same_name_a.c - One of two objects exporting the same entry -------===*\
 *
 * same_name(in: i32[n]) -> out: i32[n] = in + 1. same_name_b.c exports the
 * same entry computing something else; only the object name tells them apart.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

void ENTRY(same_name)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t n = mr_sizes(in)[0];
  int32_t *buf = mr_alloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i)
    buf[i] = *(int32_t *)mr_at(in, 1, 4, &i) + 1;
  mr_set_dense(mr_output(rv, 0), 1, buf, mr_sizes(in));
}
