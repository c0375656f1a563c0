/*===- test_plugin.c - ORC wrapper functions for call_wrapper tests ------===*\
 *
 * Loaded into the executor with --plugin. The tests call these through
 * __catalyst__remote__call_wrapper and check results that fit inline in the
 * wrapper buffer (<= 8 bytes) and results that need a malloc'ed one. The
 * tick counter is bumped by the `tick` kernel, which links against it. The
 * asset readers find the connection's assets the way a kernel would.
 *
\*===----------------------------------------------------------------------===*/

#include "wrapper_buffer.h"

#include <stdint.h>
#include <stdio.h>

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

/* The connection's asset directory, found as a kernel would find it. */
PLUGIN_API CWrapperFunctionBuffer test_plugin_asset_dir(const char *data, size_t size) {
  const char *dir = getenv("CATALYST_REMOTE_ASSET_DIR");
  if (!dir)
    return wrapper_error("CATALYST_REMOTE_ASSET_DIR is not set");
  return wrapper_copy(dir, strlen(dir));
}

static CWrapperFunctionBuffer read_all(FILE *f) {
  CWrapperFunctionBuffer R;
  if (fseek(f, 0, SEEK_END) != 0)
    return wrapper_error("cannot seek in the asset");
  long n = ftell(f);
  rewind(f);
  char *out = wrapper_result(&R, n < 0 ? 0 : (size_t)n);
  if (n < 0 || fread(out, 1, (size_t)n, f) != (size_t)n) {
    if (R.Size > sizeof(R.Data.Value))
      free(R.Data.ValuePtr);
    return wrapper_error("cannot read the asset");
  }
  return R;
}

/* The bytes of the asset whose name is the arguments. */
PLUGIN_API CWrapperFunctionBuffer test_plugin_read_asset(const char *data, size_t size) {
  const char *dir = getenv("CATALYST_REMOTE_ASSET_DIR");
  if (!dir)
    return wrapper_error("CATALYST_REMOTE_ASSET_DIR is not set");
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/%.*s", dir, (int)size, data) >= (int)sizeof(path))
    return wrapper_error("asset path too long");
  FILE *f = fopen(path, "rb");
  if (!f)
    return wrapper_error("cannot open the asset");
  CWrapperFunctionBuffer R = read_all(f);
  fclose(f);
  return R;
}
