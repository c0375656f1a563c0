/*===- crash.c - A kernel that kills its connection process --------------===*\
 *
 * crash() writes through a null pointer. The launch must fail with an error
 * and the executor must go on serving other sessions.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

void ENTRY(crash)(void *rv, void *av) {
  /* volatile: the store must happen, not be reasoned away. */
  volatile int *volatile target = NULL;
  *target = 42;
}
