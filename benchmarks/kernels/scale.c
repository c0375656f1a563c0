/*===- scale.c - The benchmark's sample kernel ----------------------------===*\
 *
 * `scale` follows Catalyst's pyface ABI, `void entry(void *rv, void *av)`:
 * av[0] points at a rank-1 f64 memref descriptor, rv receives one. The result
 * is a fresh malloc'ed buffer holding every input element times two, as an
 * MLIR-compiled kernel would hand back a new tensor.
 *
\*===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdlib.h>

struct MemrefF64R1 {
  double *allocated;
  double *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
};

void scale(void *rv, void *av) {
  const struct MemrefF64R1 *in = ((struct MemrefF64R1 *const *)av)[0];
  struct MemrefF64R1 *out = (struct MemrefF64R1 *)rv;
  int64_t n = in->sizes[0];
  /* malloc(0) may return NULL; an empty tensor still gets a real buffer. */
  double *buf = (double *)malloc(n > 0 ? (size_t)n * sizeof(double) : 1);
  const double *src = in->aligned + in->offset;
  for (int64_t i = 0; i < n; ++i)
    buf[i] = 2.0 * src[i * in->strides[0]];
  out->allocated = buf;
  out->aligned = buf;
  out->offset = 0;
  out->sizes[0] = n;
  out->strides[0] = 1;
}
