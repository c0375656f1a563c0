/*===- capi_launch_bench.c - Launches through the C ABI, for comparison ---===*\
 *
 * The C ABI's side of benchmarks/python_launch.py: the same launch the
 * Python package makes (one dense rank-1 uint8 input, one output of that
 * kind, into a fresh buffer freed after each launch), made the way a C
 * program makes it, so that the script can time both in turns on the same
 * executor and the same machine.
 *
 * Usage:
 *   catalyst-remote-capi-launch-bench ADDRESS OBJECT ENTRY
 *       opens ADDRESS with __catalyst__remote__open (transport and strategy
 *       from CATALYST_REMOTE_TRANSPORT and CATALYST_REMOTE_STRATEGY, as any
 *       C ABI caller's), ships OBJECT, prints one JSON line saying which
 *       transport and strategy the session uses, then answers commands on
 *       stdin, one a line:
 *         time BYTES COUNT  COUNT launches of BYTES each way; prints
 *                           {"bytes": BYTES, "cpu_ns": N, "launch_ns": [...]}:
 *                           each launch's time, and the CPU time this
 *                           process spent on all of them
 *         quit              closes the session (so does end of input)
 *   catalyst-remote-capi-launch-bench --peak BYTES ADDRESS OBJECT ENTRY
 *       in this fresh process, after a 4 KiB launch: the resident set,
 *       then the peak resident set around one launch of BYTES each way
 *       while the input and output are held, as one JSON line (bytes)
 *
 * The first launch of each new size is untimed and checks every byte of
 * the output.
 * A failure prints the C ABI's message and exits 1.
 *
\*===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "catalyst/remote/RemoteCAPI.h"
#include "kernels/memref_r1.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bounds on what a command may ask, so a typo cannot exhaust memory. */
static const uint64_t MaxBytes = (uint64_t)4 << 30;
static const uint64_t MaxCount = 1000000;

static void fail(const char *message) {
  fprintf(stderr, "catalyst-remote-capi-launch-bench: %s\n", message);
  exit(1);
}

/* Every C ABI failure ends the run with its message. */
static void onFailure(const char *message) {
  fail(message);
}

static uint64_t clockNs(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct Launcher {
  int64_t session;
  const char *object;
  const char *entry;
  /* The input of the size last timed, kept while the size stays: the
   * Python side makes its input array once per size too. */
  char *in;
  uint64_t inBytes;
};

/* One launch of In (Bytes long) into a fresh output buffer, which *Out
 * describes and the caller frees. */
static void launchOnce(const struct Launcher *l, char *in, uint64_t bytes, struct MemrefR1 *out) {
  struct MemrefR1 input = {in, in, 0, {(int64_t)bytes}, {1}};
  void *inputs[] = {&input};
  void *outputs[] = {out};
  size_t rank = 1, elemSize = 1;
  memset(out, 0, sizeof(*out));
  __catalyst__remote__launch(l->session, l->entry, l->object, 1, inputs, &rank, &elemSize, 1,
                             outputs, &rank, &elemSize);
}

static void checkOutput(const struct MemrefR1 *out, const char *in, uint64_t bytes) {
  if (out->sizes[0] != (int64_t)bytes || out->strides[0] != 1 ||
      memcmp((const char *)out->aligned + out->offset, in, bytes) != 0)
    fail("the output differs from the input");
}

static char *filledInput(uint64_t bytes) {
  /* malloc(0) may return NULL; a launch of nothing still needs an address. */
  char *in = malloc(bytes ? bytes : 1);
  if (!in)
    fail("cannot allocate the input");
  /* Touched, so all of it is resident, as a caller's data is. */
  for (uint64_t i = 0; i < bytes; ++i)
    in[i] = (char)(i * 131 + 7);
  return in;
}

static struct Launcher openLauncher(const char *address, const char *object, const char *entry) {
  struct Launcher l = {__catalyst__remote__open(address), object, entry, NULL, 0};
  __catalyst__remote__send_binary(l.session, object, 0);
  return l;
}

static void warmUp(const struct Launcher *l) {
  char *in = filledInput(4096);
  struct MemrefR1 out;
  launchOnce(l, in, 4096, &out);
  checkOutput(&out, in, 4096);
  free(out.allocated);
  free(in);
}

static void printSession(const struct Launcher *l) {
  struct catalyst_remote_stats stats;
  __catalyst__remote__stats(l->session, &stats);
  printf("{\"transport\": \"%s\", \"strategy\": \"%s\"}\n", stats.transport, stats.strategy);
  fflush(stdout);
}

/* Makes l's input Bytes long, checking one launch of a new size. */
static void useSize(struct Launcher *l, uint64_t bytes) {
  struct MemrefR1 out;
  if (l->in && l->inBytes == bytes)
    return;
  free(l->in);
  l->in = filledInput(bytes);
  l->inBytes = bytes;
  launchOnce(l, l->in, bytes, &out);
  checkOutput(&out, l->in, bytes);
  free(out.allocated);
}

static void timeLaunches(struct Launcher *l, uint64_t bytes, uint64_t count) {
  uint64_t *ns = malloc(count * sizeof(uint64_t));
  struct MemrefR1 out;
  if (!ns)
    fail("cannot allocate the times");
  useSize(l, bytes);
  uint64_t cpuStart = clockNs(CLOCK_PROCESS_CPUTIME_ID);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t start = clockNs(CLOCK_MONOTONIC);
    launchOnce(l, l->in, bytes, &out);
    free(out.allocated);
    ns[i] = clockNs(CLOCK_MONOTONIC) - start;
  }
  uint64_t cpu = clockNs(CLOCK_PROCESS_CPUTIME_ID) - cpuStart;
  printf("{\"bytes\": %" PRIu64 ", \"cpu_ns\": %" PRIu64 ", \"launch_ns\": [", bytes, cpu);
  for (uint64_t i = 0; i < count; ++i)
    printf("%s%" PRIu64, i ? ", " : "", ns[i]);
  printf("]}\n");
  fflush(stdout);
  free(ns);
}

static int serve(struct Launcher *l) {
  char line[256];
  while (fgets(line, sizeof(line), stdin)) {
    uint64_t bytes, count;
    if (strncmp(line, "quit", 4) == 0)
      break;
    if (sscanf(line, "time %" SCNu64 " %" SCNu64, &bytes, &count) != 2 || bytes > MaxBytes ||
        count == 0 || count > MaxCount)
      fail("a command is 'time BYTES COUNT' (BYTES up to 4 GiB, COUNT 1 to 1000000) or 'quit'");
    timeLaunches(l, bytes, count);
  }
  free(l->in);
  __catalyst__remote__close(l->session);
  return 0;
}

/* A "Field:  N kB" line of /proc/self/status, in bytes. */
static uint64_t statusBytes(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  size_t n = strlen(field);
  uint64_t kb = 0;
  if (!f)
    fail("cannot open /proc/self/status");
  while (fgets(line, sizeof(line), f))
    if (strncmp(line, field, n) == 0 && line[n] == ':' &&
        sscanf(line + n + 1, "%" SCNu64, &kb) == 1)
      break;
  fclose(f);
  if (!kb)
    fail("cannot read a memory figure from /proc/self/status");
  return kb * 1024;
}

static int peak(const struct Launcher *l, uint64_t bytes) {
  uint64_t rssBefore, hwmAfter;
  struct MemrefR1 out;
  char *in;
  warmUp(l);
  rssBefore = statusBytes("VmRSS");
  in = filledInput(bytes);
  launchOnce(l, in, bytes, &out);
  /* Read while the output is still held: it is one of the two buffers. */
  hwmAfter = statusBytes("VmHWM");
  checkOutput(&out, in, bytes);
  free(out.allocated);
  free(in);
  __catalyst__remote__close(l->session);
  printf("{\"bytes\": %" PRIu64 ", \"rss_before_input\": %" PRIu64
         ", \"hwm_after_launch\": %" PRIu64 "}\n",
         bytes, rssBefore, hwmAfter);
  return 0;
}

int main(int argc, char **argv) {
  __catalyst__remote__set_failure_handler(onFailure);
  if (argc == 4) {
    struct Launcher l = openLauncher(argv[1], argv[2], argv[3]);
    warmUp(&l);
    printSession(&l);
    return serve(&l);
  }
  if (argc == 6 && strcmp(argv[1], "--peak") == 0) {
    char *end;
    uint64_t bytes = strtoull(argv[2], &end, 10);
    if (*end || bytes == 0 || bytes > MaxBytes)
      fail("--peak takes a byte count from 1 to 4 GiB");
    struct Launcher l = openLauncher(argv[3], argv[4], argv[5]);
    return peak(&l, bytes);
  }
  fprintf(stderr, "usage: catalyst-remote-capi-launch-bench ADDRESS OBJECT ENTRY\n"
                  "       catalyst-remote-capi-launch-bench --peak BYTES ADDRESS OBJECT ENTRY\n");
  return 2;
}
