/*===- sleepy.c - A kernel that takes its time ----------------------------===*\
 *
 * sleepy(ms: i64[1]) -> out: i64[1] sleeps for ms milliseconds, then returns
 * ms in a fresh buffer: a kernel as long as a test needs, to tell a busy
 * executor from one that stopped answering.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <time.h>

void ENTRY(sleepy)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t zero[1] = {0}, ms;
  memcpy(&ms, mr_at(in, 1, 8, zero), 8);
  struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0) {
  }
  int64_t *buf = mr_alloc(8);
  *buf = ms;
  int64_t one[1] = {1};
  mr_set_dense(mr_output(rv, 0), 1, buf, one);
}
