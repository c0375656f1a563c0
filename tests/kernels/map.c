/*===- map.c - An element-wise kernel for every rank and element size ---===*\
 *
 * map_r<R>_e<E>(in) -> out: out has in's shape, dense, and element i (in
 * row-major order) is f(in[i], i). f mixes in the position so that a value
 * read from the wrong place, or written to the wrong place, shows.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

static void map_element(size_t esize, const char *src, char *dst, uint64_t i) {
  switch (esize) {
  case 1: {
    uint8_t x;
    memcpy(&x, src, 1);
    x = (uint8_t)(x * 3u + i);
    memcpy(dst, &x, 1);
    break;
  }
  case 2: {
    uint16_t x;
    memcpy(&x, src, 2);
    x = (uint16_t)(x * 5u + i);
    memcpy(dst, &x, 2);
    break;
  }
  case 4: {
    uint32_t x;
    memcpy(&x, src, 4);
    x = x * 7u + (uint32_t)i;
    memcpy(dst, &x, 4);
    break;
  }
  case 8: {
    uint64_t x;
    memcpy(&x, src, 8);
    x = x * 11u + i;
    memcpy(dst, &x, 8);
    break;
  }
  default: {
    unsigned __int128 x;
    memcpy(&x, src, 16);
    x = x * 13u + ((unsigned __int128)i << 64 | i);
    memcpy(dst, &x, 16);
    break;
  }
  }
}

static void map_kernel(memref_t *out, memref_t *in, int rank, size_t esize) {
  int64_t idx[KERNEL_MAX_RANK] = {0};
  int64_t n = mr_count(in, rank);
  char *buf = mr_alloc((size_t)n * esize);
  for (int64_t i = 0; i < n; ++i) {
    map_element(esize, mr_at(in, rank, esize, idx), buf + i * (int64_t)esize, (uint64_t)i);
    mr_next(idx, mr_sizes(in), rank);
  }
  mr_set_dense(out, rank, buf, mr_sizes(in));
}

#define MAP_ENTRY(R, E)                                                                            \
  void ENTRY(map_r##R##_e##E)(void *rv, void *av) {                                                \
    map_kernel(mr_output(rv, 0), mr_input(av, 0), R, E);                                           \
  }
FOR_RANKS_AND_SIZES(MAP_ENTRY)
