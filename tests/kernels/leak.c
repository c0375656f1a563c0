/*===- leak.c - A kernel that leaks on purpose ---------------------------===*\
 *
 * leak() allocates 1 MiB, touches every page and drops it. It is the control
 * for the memory tests: its growth must show in the connection process's
 * resident memory, or the probe is looking at the wrong process.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

/* Chained from a global so the compiler must keep the writes. */
static void *Leaked;

void ENTRY(leak)(void *rv, void *av) {
  char *p = malloc(1 << 20);
  if (!p)
    return;
  memset(p, 1, 1 << 20);
  memcpy(p, &Leaked, sizeof(Leaked));
  Leaked = p;
}
