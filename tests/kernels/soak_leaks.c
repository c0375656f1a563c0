/*===- soak_leaks.c - Kernels that leak a descriptor or a thread ---------===*\
 *
 * leak_fd() opens /dev/null and keeps it; leak_thread() starts a thread that
 * never ends. Neither is launched by a normal soak: they are how the soak's
 * executor-side bounds on open descriptors and threads are shown to fail
 * (CATALYST_REMOTE_SOAK_INJECT, tests/soak/SoakTest.cpp).
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

/* Kept in globals so nothing about them looks unused. */
static int LastFd = -1;
static pthread_t LastThread;

static void *park(void *arg) {
  for (;;)
    pause();
  return arg;
}

void ENTRY(leak_fd)(void *rv, void *av) {
  LastFd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void ENTRY(leak_thread)(void *rv, void *av) {
  if (pthread_create(&LastThread, NULL, park, NULL) == 0)
    pthread_detach(LastThread);
}
