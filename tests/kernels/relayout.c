/*===- relayout.c - Outputs that are not dense row-major -----------------===*\
 *
 * relayout_r<R>_e<E>(in) -> out: out holds in's values, but in a buffer laid
 * out column-major, every other element, starting 2 elements in, with the
 * gaps filled with 0xee. Whoever brings out back must read it through its
 * strides; a dense copy of its buffer would be wrong.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

static void relayout_kernel(memref_t *out, memref_t *in, int rank, size_t esize) {
  int64_t *sizes = mr_sizes(in);
  int64_t stride = 2, span = 1;
  for (int d = 0; d < rank; ++d) {
    out->dims[d] = sizes[d];
    out->dims[rank + d] = stride;
    if (sizes[d] > 0)
      span += (sizes[d] - 1) * stride;
    stride *= sizes[d] > 0 ? sizes[d] : 1;
  }
  out->offset = 2;
  char *buf = mr_alloc((size_t)(span + 2) * esize);
  memset(buf, 0xee, (size_t)(span + 2) * esize);
  out->allocated = buf;
  out->aligned = buf;
  int64_t idx[KERNEL_MAX_RANK] = {0};
  int64_t n = mr_count(in, rank);
  for (int64_t i = 0; i < n; ++i) {
    memcpy(mr_at(out, rank, esize, idx), mr_at(in, rank, esize, idx), esize);
    mr_next(idx, sizes, rank);
  }
}

#define RELAYOUT_ENTRY(R, E)                                                                       \
  void ENTRY(relayout_r##R##_e##E)(void *rv, void *av) {                                           \
    relayout_kernel(mr_output(rv, 0), mr_input(av, 0), R, E);                                      \
  }
FOR_RANKS_AND_SIZES(RELAYOUT_ENTRY)
