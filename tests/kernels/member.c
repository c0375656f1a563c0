/*===- member.c - Which executor of a pool ran a launch -------------------===*\
 *
 * whose(in: i64[2] = {ms, tag}) -> out: i64[2] = {tag, executor pid} sleeps
 * for ms milliseconds and says which launch it was (tag) and which executor
 * ran it: the pid of its connection process's parent, the listener. A pool
 * test tells its members apart by it.
 * whose_flag(in, path: i8[n]) first writes the executor's pid to the file at
 * path (NUL-terminated), so that a test knows where the launch runs while it
 * runs.
 *
 * whose_gate(in, path: i8[n]) writes the pid as whose_flag does, then runs
 * until the test removes the file, for at most ms milliseconds: its output
 * is {tag, pid} when the test ended it, {-1, pid} when ms ran out first. A
 * test then knows that whatever it did meanwhile did not wait for it.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void whose_output(void *rv, int64_t tag) {
  int64_t *buf = mr_alloc(16);
  buf[0] = tag;
  buf[1] = (int64_t)getppid();
  int64_t two[1] = {2};
  mr_set_dense(mr_output(rv, 0), 1, buf, two);
}

/* Writes this executor's pid to the file named by input 1; false if it
 * cannot be created. */
static int write_pid(void *av) {
  int64_t zero[1] = {0};
  int fd = open(mr_at(mr_input(av, 1), 1, 1, zero), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return 0;
  char pid[32];
  int n = snprintf(pid, sizeof(pid), "%d\n", (int)getppid());
  if (n > 0 && write(fd, pid, (size_t)n) != n) {
    /* The test then waits for a pid that never comes, and says so. */
  }
  close(fd);
  return 1;
}

static void whose_impl(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t at[1] = {0}, ms, tag;
  memcpy(&ms, mr_at(in, 1, 8, at), 8);
  at[0] = 1;
  memcpy(&tag, mr_at(in, 1, 8, at), 8);
  struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0) {
  }
  whose_output(rv, tag);
}

void ENTRY(whose)(void *rv, void *av) {
  whose_impl(rv, av);
}

void ENTRY(whose_flag)(void *rv, void *av) {
  write_pid(av);
  whose_impl(rv, av);
}

void ENTRY(whose_gate)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t at[1] = {0}, ms, tag;
  memcpy(&ms, mr_at(in, 1, 8, at), 8);
  at[0] = 1;
  memcpy(&tag, mr_at(in, 1, 8, at), 8);
  int64_t zero[1] = {0};
  const char *path = mr_at(mr_input(av, 1), 1, 1, zero);
  if (!write_pid(av)) {
    whose_output(rv, -1);
    return;
  }
  struct timespec tick = {0, 5 * 1000000L};
  for (int64_t waited = 0; waited < ms; waited += 5) {
    if (access(path, F_OK) != 0) {
      whose_output(rv, tag);
      return;
    }
    nanosleep(&tick, NULL);
  }
  whose_output(rv, -1);
}
