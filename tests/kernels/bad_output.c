/*===- bad_output.c - A kernel whose second output is no memref ----------===*\
 *
 * bad_output(in: u8[n]) -> (copy: u8[n], bad: u8[?])
 *   copy is a fresh buffer holding in's bytes, a valid output; bad shares
 *   that buffer but has a negative size, so whoever reads the outputs must
 *   refuse the launch. The copy's buffer is still the kernel's allocation:
 *   it must be freed all the same, or every refused launch leaks n bytes in
 *   the connection process.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

void ENTRY(bad_output)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t n = mr_sizes(in)[0];
  char *buf = mr_alloc((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    buf[i] = *mr_at(in, 1, 1, &i);
  memref_t *copy = mr_output(rv, 0);
  mr_set_dense(copy, 1, buf, mr_sizes(in));
  memref_t *bad = mr_output(rv, mr_slots(1));
  int64_t size[1] = {-1};
  mr_set_dense(bad, 1, buf, size);
}
