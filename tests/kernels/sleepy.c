/*===- sleepy.c - A kernel that takes its time ----------------------------===*\
 *
 * sleepy(ms: i64[1]) -> out: i64[1] sleeps for ms milliseconds, then returns
 * ms in a fresh buffer: a kernel as long as a test needs, to tell a busy
 * executor from one that stopped answering. sleepy_flag(ms, path: i8[n])
 * first creates the file at path (NUL-terminated), so that a test knows the
 * kernel is running.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static void sleep_and_return(void *rv, void *av) {
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

void ENTRY(sleepy)(void *rv, void *av) {
  sleep_and_return(rv, av);
}

void ENTRY(sleepy_flag)(void *rv, void *av) {
  int64_t zero[1] = {0};
  int fd = open(mr_at(mr_input(av, 1), 1, 1, zero), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0)
    close(fd);
  sleep_and_return(rv, av);
}
