/*===- test_plugin.c - ORC wrapper functions for call_wrapper tests ------===*\
 *
 * Loaded into the executor with --plugin. The tests call these through
 * __catalyst__remote__call_wrapper and check results that fit inline in the
 * wrapper buffer (<= 8 bytes) and results that need a malloc'ed one. The
 * tick counter is bumped by the `tick` kernel, which links against it.
 *
\*===----------------------------------------------------------------------===*/

#include "wrapper_buffer.h"

#include <stdint.h>

#define PLUGIN_API __attribute__((visibility("default")))

/* The arguments, last byte first. */
PLUGIN_API CWrapperFunctionBuffer test_plugin_echo_reverse(const char *data, size_t size) {
  CWrapperFunctionBuffer R;
  char *out = wrapper_result(&R, size);
  for (size_t i = 0; i < size; ++i)
    out[i] = data[size - 1 - i];
  return R;
}

/* Three bytes: always stored inline. */
PLUGIN_API CWrapperFunctionBuffer test_plugin_three_bytes(const char *data, size_t size) {
  return wrapper_copy("xyz", 3);
}

/* 100 bytes, byte i = 7 * i + 1: always in a malloc'ed buffer. */
PLUGIN_API CWrapperFunctionBuffer test_plugin_hundred_bytes(const char *data, size_t size) {
  CWrapperFunctionBuffer R;
  char *out = wrapper_result(&R, 100);
  for (int i = 0; i < 100; ++i)
    out[i] = (char)(7 * i + 1);
  return R;
}

/* An out-of-band error, as ORC reports a failed wrapper call. */
PLUGIN_API CWrapperFunctionBuffer test_plugin_refuse(const char *data, size_t size) {
  return wrapper_error("test plugin refused the call");
}

static uint64_t Ticks;

PLUGIN_API void test_plugin_tick(void) {
  __atomic_add_fetch(&Ticks, 1, __ATOMIC_SEQ_CST);
}

/* How often tick() ran in this process, as 8 little-endian bytes. */
PLUGIN_API CWrapperFunctionBuffer test_plugin_ticks(const char *data, size_t size) {
  uint64_t n = __atomic_load_n(&Ticks, __ATOMIC_SEQ_CST);
  return wrapper_copy(&n, sizeof(n));
}
