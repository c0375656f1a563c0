/*===- clock_ahead.c - A steady clock far from the host's ----------------===*\
 *
 * Preloaded into an executor, it moves CLOCK_MONOTONIC (steady_clock) 1000 s
 * ahead, as the clock of another machine, booted earlier, would be: the trace
 * tests check that the host finds the offset and maps the executor's times
 * back. A constant shift leaves every interval the executor measures as it
 * was; only its deadlines move an equal amount later, which the short tests
 * that use it never reach.
 *
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

enum { AheadSeconds = 1000 };

int clock_gettime(clockid_t Id, struct timespec *Ts) {
  static int (*Real)(clockid_t, struct timespec *);
  if (!Real)
    Real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  int Rc = Real(Id, Ts);
  if (Rc == 0 && Id == CLOCK_MONOTONIC)
    Ts->tv_sec += AheadSeconds;
  return Rc;
}
