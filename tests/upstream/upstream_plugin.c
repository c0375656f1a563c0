/*===- upstream_plugin.c - A kernel's view of its assets, either executor -===*\
 *
 * Loaded into either executor with --plugin; called through a wrapper call
 * on the connection that sent the asset. catalyst-remote-executor names the
 * connection's asset directory in CATALYST_REMOTE_ASSET_DIR, in the
 * connection process; Catalyst's catalyst-executor sets nothing and keeps
 * them in $TMPDIR/catalyst-assets/<the connection process's pid>/ (TMPDIR
 * unset: /tmp), where its kernels look. This looks where the executor that
 * loaded it says, else where Catalyst's keeps them.
 *
\*===----------------------------------------------------------------------===*/

#include "wrapper_buffer.h"

#include <stdio.h>
#include <unistd.h>

#define PLUGIN_API __attribute__((visibility("default")))

static int asset_path(char *path, size_t cap, const char *name, size_t size) {
  const char *dir = getenv("CATALYST_REMOTE_ASSET_DIR");
  if (dir)
    return snprintf(path, cap, "%s/%.*s", dir, (int)size, name);
  const char *tmp = getenv("TMPDIR");
  return snprintf(path, cap, "%s/catalyst-assets/%d/%.*s", tmp && *tmp ? tmp : "/tmp",
                  (int)getpid(), (int)size, name);
}

/* The bytes of the asset whose name is the arguments. */
PLUGIN_API CWrapperFunctionBuffer upstream_read_asset(const char *data, size_t size) {
  char path[4096];
  int n = asset_path(path, sizeof(path), data, size);
  if (n < 0 || n >= (int)sizeof(path))
    return wrapper_error("asset path too long");
  FILE *f = fopen(path, "rb");
  if (!f)
    return wrapper_error("cannot open the asset");
  CWrapperFunctionBuffer R;
  char buf[1 << 16];
  size_t got = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  memcpy(wrapper_result(&R, got), buf, got);
  return R;
}
