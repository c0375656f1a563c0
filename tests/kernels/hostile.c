/*===- hostile.c - Kernels whose outputs cannot be sent as they are -------===*\
 *
 * All return one rank-1 output of 1-byte elements, whatever their inputs.
 * big_output() returns 2 MiB, more than an executor started with
 * `--max-message 1` may send. broadcast_output() returns one byte seen as
 * 32 MiB through a stride of 0: what a host receives is 32 MiB of dense
 * values for the price of a descriptor. unreadable_output() returns 8 KiB whose first
 * page is readable and whose second is PROT_NONE: a send from it would fail
 * after the first page. Its `allocated` is MLIR's constant-global marker, so
 * no one frees the mapping.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <sys/mman.h>

void ENTRY(big_output)(void *rv, void *av) {
  int64_t size = 2 << 20;
  char *buf = mr_alloc(size);
  if (!buf)
    return;
  for (int64_t i = 0; i < size; ++i)
    buf[i] = (char)i;
  mr_set_dense(mr_output(rv, 0), 1, buf, &size);
}

void ENTRY(broadcast_output)(void *rv, void *av) {
  int64_t size = 32 << 20;
  char *buf = mr_alloc(1);
  if (!buf)
    return;
  buf[0] = 7;
  memref_t *out = mr_output(rv, 0);
  mr_set_dense(out, 1, buf, &size);
  mr_strides(out, 1)[0] = 0;
}

void ENTRY(unreadable_output)(void *rv, void *av) {
  int64_t size = 8192;
  char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED)
    return;
  memset(buf, 1, 4096);
  mprotect(buf + 4096, 4096, PROT_NONE);
  memref_t *out = mr_output(rv, 0);
  mr_set_dense(out, 1, buf, &size);
  out->allocated = CONSTANT_GLOBAL_MARKER;
}
