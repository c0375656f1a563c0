/*===- rt_plugin.c - Catalyst runtime hooks around each connection -------===*\
 *
 * Defines __catalyst__rt__initialize and __catalyst__rt__finalize, which the
 * executor runs at the start and end of every connection. Each appends
 * "<hook> <pid>" to the file named by CATALYST_TEST_RT_LOG, so a test can see
 * that both ran, in the connection's process. rt_plugin_initialized reports,
 * from inside a connection, whether initialize ran there.
 *
\*===----------------------------------------------------------------------===*/

#include "wrapper_buffer.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define PLUGIN_API __attribute__((visibility("default")))

static int Initialized;

static void log_hook(const char *hook) {
  const char *path = getenv("CATALYST_TEST_RT_LOG");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f)
    return;
  fprintf(f, "%s %d\n", hook, (int)getpid());
  fclose(f);
}

PLUGIN_API void __catalyst__rt__initialize(uint32_t *seed) {
  Initialized = 1;
  log_hook("initialize");
}

PLUGIN_API void __catalyst__rt__finalize(void) {
  Initialized = 0;
  log_hook("finalize");
}

PLUGIN_API CWrapperFunctionBuffer rt_plugin_initialized(const char *data, size_t size) {
  char flag = (char)Initialized;
  return wrapper_copy(&flag, 1);
}
