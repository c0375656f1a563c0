/*===- deaths.c - Kernels that kill their connection process, each its way -===*\
 *
 * Each entry dies the way a real kernel might: a null store (SIGSEGV), a
 * read of a mapped page past the end of its file (SIGBUS), an integer
 * division by zero (SIGFPE), a trap instruction (SIGILL), abort() (SIGABRT),
 * a recursion that overflows the thread's stack (SIGSEGV, handled on the
 * alternate stack), exit(3) and _exit(4). The host's error must name the
 * signal or the exit status.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

void ENTRY(die_segv)(void *rv, void *av) {
  volatile int *volatile target = NULL;
  *target = 42;
}

void ENTRY(die_bus)(void *rv, void *av) {
  FILE *empty = tmpfile();
  volatile char *page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(empty), 0);
  (void)page[0];
}

void ENTRY(die_fpe)(void *rv, void *av) {
  volatile int zero = 0, one = 1;
  one = one / zero;
}

void ENTRY(die_ill)(void *rv, void *av) {
  __builtin_trap();
}

void ENTRY(die_abort)(void *rv, void *av) {
  abort();
}

void ENTRY(die_exit)(void *rv, void *av) {
  exit(3);
}

void ENTRY(die__exit)(void *rv, void *av) {
  _exit(4);
}

/* Recurses while depth < limit: with a limit no stack can hold (the
   compiler cannot tell, so it keeps the frames), it overflows. */
static int deeper(volatile char *above, long depth, long limit) {
  volatile char frame[4096];
  frame[0] = above ? above[0] + 1 : 0;
  if (depth >= limit)
    return frame[0];
  return deeper(frame, depth + 1, limit) + frame[1];
}

void ENTRY(die_stack)(void *rv, void *av) {
  volatile long limit = 1L << 40;
  (void)deeper(NULL, 0, limit);
}
