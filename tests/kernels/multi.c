/*===- multi.c - Eight inputs and three outputs in one launch ------------===*\
 *
 * multi(a, b, c, d: i64[n], m: i32[p][q], s: i64, bytes: u8[x][y][z],
 *       wide: 16-byte[w])
 *   -> (sum: i64[n]       = a + b + c + d + s,
 *       mt: i32[q][p]      = m transposed,
 *       total: i64         = sum of bytes + sum of wide's low halves)
 * Inputs and outputs differ in rank and element size, so every descriptor's
 * place in av and rv matters.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

static int64_t load_i64(memref_t *m, int rank, const int64_t *idx) {
  int64_t v;
  memcpy(&v, mr_at(m, rank, 8, idx), 8);
  return v;
}

static void sum_vectors(memref_t *out, void *av) {
  memref_t *first = mr_input(av, 0);
  int64_t n = mr_sizes(first)[0];
  int64_t zero[1] = {0};
  int64_t s = load_i64(mr_input(av, 5), 0, zero);
  int64_t *buf = mr_alloc((size_t)n * 8);
  for (int64_t i = 0; i < n; ++i) {
    int64_t idx[1] = {i};
    /* Wraps on overflow (the inputs are random), in unsigned arithmetic,
       where wrapping is defined. */
    uint64_t sum = (uint64_t)s;
    for (int k = 0; k < 4; ++k)
      sum += (uint64_t)load_i64(mr_input(av, k), 1, idx);
    buf[i] = (int64_t)sum;
  }
  mr_set_dense(out, 1, buf, mr_sizes(first));
}

static void transpose(memref_t *out, memref_t *m) {
  int64_t p = mr_sizes(m)[0], q = mr_sizes(m)[1];
  int32_t *buf = mr_alloc((size_t)(p * q) * 4);
  for (int64_t i = 0; i < p; ++i)
    for (int64_t j = 0; j < q; ++j) {
      int64_t idx[2] = {i, j};
      memcpy(&buf[j * p + i], mr_at(m, 2, 4, idx), 4);
    }
  int64_t sizes[2] = {q, p};
  mr_set_dense(out, 2, buf, sizes);
}

static void total(memref_t *out, memref_t *bytes, memref_t *wide) {
  int64_t *buf = mr_alloc(8);
  *buf = 0;
  int64_t idx[3] = {0, 0, 0};
  for (int64_t i = 0, n = mr_count(bytes, 3); i < n; ++i) {
    *buf += *(uint8_t *)mr_at(bytes, 3, 1, idx);
    mr_next(idx, mr_sizes(bytes), 3);
  }
  for (int64_t i = 0; i < mr_sizes(wide)[0]; ++i) {
    int64_t low;
    memcpy(&low, mr_at(wide, 1, 16, &i), 8);
    *buf = (int64_t)((uint64_t)*buf + (uint64_t)low); /* wraps, defined */
  }
  mr_set_dense(out, 0, buf, NULL);
}

void ENTRY(multi)(void *rv, void *av) {
  sum_vectors(mr_output(rv, 0), av);
  transpose(mr_output(rv, mr_slots(1)), mr_input(av, 4));
  total(mr_output(rv, mr_slots(1) + mr_slots(2)), mr_input(av, 6), mr_input(av, 7));
}
