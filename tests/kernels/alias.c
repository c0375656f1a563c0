/*===- alias.c - Outputs that share buffers ------------------------------===*\
 *
 * alias_split(in: i32[n]) -> (tail: i32[n - n/2], head: i32[n/2])
 *   One malloc'ed buffer holding in * 7; both outputs point into it (the
 *   same allocated pointer), so it must be freed exactly once, and only
 *   after both were read. head, read last, starts at the buffer's first byte,
 *   where malloc writes its free-list links: a premature free shows there.
 * alias_input(in: i32[n]) -> (same: i32[n], odd: i32[n/2], fresh: i32[n])
 *   same is in's own descriptor, as MLIR returns an argument; odd views in's
 *   buffer from element 1 with stride 2; fresh is in + 1 in a new buffer.
 *   Nobody may free in's buffer on the kernel's behalf.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

void ENTRY(alias_split)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t n = mr_sizes(in)[0];
  int32_t *buf = mr_alloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i)
    buf[i] = (int32_t)(7u * *(uint32_t *)mr_at(in, 1, 4, &i)); /* wraps, defined */
  int64_t tail_size[1] = {n - n / 2}, head_size[1] = {n / 2};
  memref_t *tail = mr_output(rv, 0);
  memref_t *head = mr_output(rv, mr_slots(1));
  mr_set_dense(tail, 1, buf, tail_size);
  tail->offset = n / 2;
  mr_set_dense(head, 1, buf, head_size);
}

void ENTRY(alias_input)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t n = mr_sizes(in)[0];
  memref_t *same = mr_output(rv, 0);
  memcpy(same, in, (size_t)mr_slots(1) * 8);

  memref_t *odd = mr_output(rv, mr_slots(1));
  memcpy(odd, in, (size_t)mr_slots(1) * 8);
  odd->offset = in->offset + in->dims[1];
  odd->dims[0] = n / 2;
  odd->dims[1] = 2 * in->dims[1];

  int32_t *buf = mr_alloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i)
    buf[i] = 1 + *(int32_t *)mr_at(in, 1, 4, &i);
  mr_set_dense(mr_output(rv, 2 * mr_slots(1)), 1, buf, mr_sizes(in));
}
