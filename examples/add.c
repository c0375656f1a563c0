// add.c - a kernel with Catalyst's entry convention, for catalyst-remote run.
//
//   _catalyst_pyface_add(a, b: float64[m][n]) -> out: float64[m][n] = a + b
//
// The entry takes rv, where its outputs' memref descriptors go, and av, an
// array of pointers to its inputs' descriptors. A descriptor of rank 2 is
// { allocated, aligned, offset, sizes[2], strides[2] }, strides counted in
// elements: an input may be in C order, Fortran order or any other layout.

#include <stdint.h>
#include <stdlib.h>

typedef struct {
  double *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} matrix;

static double at(const matrix *m, int64_t i, int64_t j) {
  return m->aligned[m->offset + i * m->strides[0] + j * m->strides[1]];
}

void _catalyst_pyface_add(void *rv, void *av) {
  const matrix *a = ((matrix **)av)[0], *b = ((matrix **)av)[1];
  int64_t m = a->sizes[0], n = a->sizes[1];
  // The output's buffer is the caller's to free: malloc, as MLIR's code does.
  double *sum = malloc(m * n > 0 ? m * n * sizeof(double) : 1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      sum[i * n + j] = at(a, i, j) + at(b, i, j);
  *(matrix *)rv = (matrix){sum, sum, 0, {m, n}, {n, 1}};
}
