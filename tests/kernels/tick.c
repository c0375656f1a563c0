/*===- tick.c - A kernel that calls into the executor's plugin -----------===*\
 *
 * tick() bumps a counter that lives in the test plugin: the symbol resolves
 * only when the executor loaded that plugin RTLD_GLOBAL. It takes no memref
 * arguments, so it can run through launch_async.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

extern void test_plugin_tick(void);

void ENTRY(tick)(void *rv, void *av) {
  test_plugin_tick();
}
