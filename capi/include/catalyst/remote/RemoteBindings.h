/*===- RemoteBindings.h - The C ABI for language bindings -------*- C -*-===*\
 *
 * What the Python package (and any other binding) calls: the work of
 * RemoteCAPI.h's functions, each returning a status instead of reporting
 * through a failure handler, so that a binding turns every failure into an
 * error of its own language and nothing aborts its process. A status is 0
 * on success, else the kind of failure (one of the constants below, the
 * numbers of catalyst::remote::FailureKind); the message is
 * __catalyst__remote__last_error() on the failing thread.
 *
 * Handles are those of RemoteCAPI.h: a handle opened here works with its
 * functions too, and one opened there works here. Unlike
 * __catalyst__remote__open, catalyst_remote_open always opens a session
 * (or pool) of its own, since its options may differ from another's to the
 * same address.
 *
 * Thread safety: every function from any thread, as RemoteCAPI.h's.
 *
\*===----------------------------------------------------------------------===*/

#ifndef CATALYST_REMOTE_REMOTEBINDINGS_H
#define CATALYST_REMOTE_REMOTEBINDINGS_H

#include "catalyst/remote/RemoteCAPI.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CATALYST_REMOTE_OK = 0,
  CATALYST_REMOTE_OTHER = 1,
  CATALYST_REMOTE_BAD_ARGUMENT = 2,
  CATALYST_REMOTE_AUTHENTICATION = 3,
  CATALYST_REMOTE_UNREACHABLE = 4,
  CATALYST_REMOTE_EXECUTOR_LOST = 5,
  CATALYST_REMOTE_KERNEL_CRASHED = 6,
  CATALYST_REMOTE_TIMEOUT = 7,
  CATALYST_REMOTE_CLOSED = 8,
  CATALYST_REMOTE_BUSY = 9,
};

/* Opens addr as __catalyst__remote__open does, with options given as
 * num_options "name=value" strings that override what the environment
 * sets (CATALYST_REMOTE_*): token (the secret itself), token_file,
 * strategy, transport, wire, handshake_timeout_ms, liveness_ms,
 * launch_timeout_ms, max_output_mib, profile (0 or 1), trace (a path),
 * and for "pool:" addresses pool_min and pool_retry (0 or 1). An unknown
 * name or a bad value fails, naming it. Outputs of its launches come back
 * in malloc'ed buffers, whatever RemoteCAPI's output allocator is. */
int32_t catalyst_remote_open(const char *addr, const char *const *options, size_t num_options,
                             int64_t *handle);

int32_t catalyst_remote_send_binary(int64_t handle, const char *path, uint32_t format);

/* As __catalyst__remote__launch; on failure the output descriptors are
 * zeroed. */
int32_t catalyst_remote_launch(int64_t handle, const char *entry_symbol, const char *object,
                               size_t num_inputs, void *const *input_descs,
                               const size_t *input_ranks, const size_t *input_elem_sizes,
                               size_t num_outputs, void *const *output_descs,
                               const size_t *output_ranks, const size_t *output_elem_sizes);

/* Resident tensors, as RemoteCAPI.h's upload (its handle in *resident,
 * 0 on failure), launch_residents, fetch and release. */
int32_t catalyst_remote_upload(int64_t handle, void *desc, size_t rank, size_t elem_size,
                               int64_t *resident);
int32_t catalyst_remote_launch_residents(int64_t handle, const char *entry_symbol,
                                         const char *object, size_t num_inputs,
                                         void *const *input_descs, const size_t *input_ranks,
                                         const size_t *input_elem_sizes, size_t num_outputs,
                                         void *const *output_descs, const size_t *output_ranks,
                                         const size_t *output_elem_sizes,
                                         const int64_t *input_residents, int64_t *kept_outputs);
int32_t catalyst_remote_fetch(int64_t resident, void *desc, size_t rank, size_t elem_size,
                              void *buffer, size_t bytes);
int32_t catalyst_remote_release(int64_t resident);

/* As __catalyst__remote__call_wrapper; *out_buf is released with
 * __catalyst__remote__free_result. */
int32_t catalyst_remote_call_wrapper(int64_t handle, const char *symbol, const char *args_buf,
                                     size_t args_size, void **out_buf, size_t *out_size);

/* A JSON object describing the target (what it is, its executor or
 * members, its counters) in a malloc'ed NUL-terminated string, released
 * with __catalyst__remote__free_result. */
int32_t catalyst_remote_describe(int64_t handle, char **json);

/* Writes the target's Perfetto trace to path (what CATALYST_REMOTE_TRACE
 * writes) for the calls made until catalyst_remote_stop_trace; a pool
 * traces every member, joining ones too. Fails, naming the file, when
 * path cannot be written or a trace is on already (the environment's, or
 * an earlier start): stop it first. docs/traces.md says what is traced. */
int32_t catalyst_remote_start_trace(int64_t handle, const char *path);

/* Ends the trace once the calls writing to it have written; nothing to do
 * when none is on. */
int32_t catalyst_remote_stop_trace(int64_t handle);

int32_t catalyst_remote_close(int64_t handle);

#ifdef __cplusplus
}
#endif

#endif
