/*===- lingering.c - A long kernel that says when it started ------------===*\
 *
 * lingering(ms: i64[1]) -> out: i64[1] creates the file `started` in its
 * connection's asset directory (CATALYST_REMOTE_ASSET_DIR), then sleeps for
 * ms milliseconds, signals or not, and returns ms: a test can wait for the
 * file to know the kernel is running, and see the executor stop a
 * connection whose kernel would not end for a long time.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void mark_started(void) {
  const char *dir = getenv("CATALYST_REMOTE_ASSET_DIR");
  char path[4096];
  if (!dir || snprintf(path, sizeof(path), "%s/started", dir) >= (int)sizeof(path))
    return;
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0)
    close(fd);
}

void ENTRY(lingering)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t zero[1] = {0}, ms;
  memcpy(&ms, mr_at(in, 1, 8, zero), 8);
  mark_started();
  struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0) {
  }
  int64_t *buf = mr_alloc(8);
  *buf = ms;
  int64_t one[1] = {1};
  mr_set_dense(mr_output(rv, 0), 1, buf, one);
}
