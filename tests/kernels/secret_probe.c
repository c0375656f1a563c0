/*===- secret_probe.c - A kernel that looks for the executor's secret ----===*\
 *
 * secret_probe(secret: i8[n]) -> found: i64[5] looks for the bytes of secret
 * where any kernel could: found[0] getenv("CATALYST_REMOTE_TOKEN"),
 * found[1] /proc/self/environ, found[2] /proc/self/cmdline, and the same
 * two files of its parent, the listener: found[3] environ, found[4] cmdline.
 * Each is 1 when the secret is there, 0 when not, -1 when it could not look.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

enum { MaxProcFile = 1 << 20 };

static int contains(const char *hay, size_t hay_len, const char *needle, size_t len) {
  if (len == 0 || hay_len < len)
    return 0;
  for (size_t i = 0; i + len <= hay_len; ++i)
    if (memcmp(hay + i, needle, len) == 0)
      return 1;
  return 0;
}

/* Reads /proc/<pid>/<name> ("self" when pid is 0) and looks in it. */
static int64_t in_proc_file(pid_t pid, const char *name, const char *secret, size_t len) {
  char path[64];
  if (pid)
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
  else
    snprintf(path, sizeof(path), "/proc/self/%s", name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char *buf = malloc(MaxProcFile);
  size_t size = 0;
  ssize_t n;
  while (buf && size < MaxProcFile && (n = read(fd, buf + size, MaxProcFile - size)) > 0)
    size += (size_t)n;
  close(fd);
  int64_t found = buf ? contains(buf, size, secret, len) : -1;
  free(buf);
  return found;
}

void ENTRY(secret_probe)(void *rv, void *av) {
  memref_t *in = mr_input(av, 0);
  int64_t zero[1] = {0};
  const char *secret = mr_at(in, 1, 1, zero);
  size_t len = (size_t)mr_sizes(in)[0];
  const char *env = getenv("CATALYST_REMOTE_TOKEN");
  int64_t *found = mr_alloc(5 * sizeof(int64_t));
  found[0] = env ? contains(env, strlen(env), secret, len) : 0;
  found[1] = in_proc_file(0, "environ", secret, len);
  found[2] = in_proc_file(0, "cmdline", secret, len);
  found[3] = in_proc_file(getppid(), "environ", secret, len);
  found[4] = in_proc_file(getppid(), "cmdline", secret, len);
  int64_t five[1] = {5};
  mr_set_dense(mr_output(rv, 0), 1, found, five);
}
