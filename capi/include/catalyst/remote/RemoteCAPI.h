/*===- RemoteCAPI.h - The C ABI Catalyst-compiled programs call -*- C -*-===*\
 *
 * Every function exists under two prefixes: __catalyst__remote__ and
 * __catalyst__executor__ (the names Catalyst-compiled programs call). They
 * do the same work and differ only in how they report a failure, each with
 * a message saying what failed and why:
 *
 * - __catalyst__executor__* throws a C++ exception derived from
 *   std::runtime_error whose what() is the message, as Catalyst's runtime
 *   does (its Python wrapper turns it into a RuntimeError), unless a handler
 *   was installed with __catalyst__executor__set_failure_handler.
 * - __catalyst__remote__* never throws: it calls the handler installed with
 *   __catalyst__remote__set_failure_handler, whose default prints the
 *   message to stderr and aborts.
 *
 * Either way the message is also __catalyst__remote__last_error(), and it is
 * reported after the call has cleaned up: a failed launch has zeroed its
 * output descriptors, and the session stays usable unless its executor is
 * gone. When an installed handler returns, the call returns: open and
 * upload 0, send_binary, close, stats, fetch and release -1, call_wrapper
 * non-zero, launch with its output descriptors zeroed, launch_async 0.
 *
\*===----------------------------------------------------------------------===*/

#ifndef CATALYST_REMOTE_REMOTECAPI_H
#define CATALYST_REMOTE_REMOTECAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "host:port", "[v6addr]:port", "name:port" or "unix:PATH" (a socket file,
 * whose listener must run as this process's user). Returns a session handle > 0;
 * the same address twice returns the same live session. When the executor
 * requires a secret, the host gives it through CATALYST_REMOTE_TOKEN_FILE
 * (a file of mode 0600, as the executor's --token-file) or
 * CATALYST_REMOTE_TOKEN (the secret itself); with one, the executor must
 * prove it knows the same secret. */
int64_t __catalyst__remote__open(const char *addr);

/* format 0: a relocatable object, linked into its own JITDylib;
 * format 1: an asset, stored byte for byte in the executor's asset directory
 * under the path's file name. An empty path is a no-op. */
int64_t __catalyst__remote__send_binary(int64_t session, const char *path, uint32_t format);

/* Runs `void entry_symbol(void *rv, void *av)` on the executor. Outputs come
 * back into fresh host buffers, their descriptors rewritten in place. */
void __catalyst__remote__launch(int64_t session, const char *entry_symbol, const char *object,
                                size_t num_inputs, void *const *input_descs,
                                const size_t *input_ranks, const size_t *input_elem_sizes,
                                size_t num_outputs, void *const *output_descs,
                                const size_t *output_ranks, const size_t *output_elem_sizes);

/* launch(), receiving output i into output_buffers[i] (output_bytes[i]
 * long, owned by the caller) when its dense values fit, else into a fresh
 * buffer as launch() does; the descriptor's allocated pointer says which.
 * Memory used before is faster to receive into than fresh memory, whose
 * pages the OS zeroes on first touch. The buffers must not overlap; after
 * a failed launch one may hold part of an output. */
void __catalyst__remote__launch_into(int64_t session, const char *entry_symbol, const char *object,
                                     size_t num_inputs, void *const *input_descs,
                                     const size_t *input_ranks, const size_t *input_elem_sizes,
                                     size_t num_outputs, void *const *output_descs,
                                     const size_t *output_ranks, const size_t *output_elem_sizes,
                                     void *const *output_buffers, const size_t *output_bytes);

/* Resident tensors: a tensor kept in the executor for its session, so
 * that launches read it there and none of its values cross again
 * (catalyst/remote/Resident.h says more). Zero-copy sessions only; a pool
 * refuses them for now. A resident has a handle > 0 of its own, valid
 * until it is released or its session closes.
 *
 * upload copies the memref desc describes (any layout; kept dense, in
 * row-major order) into the executor and returns its resident handle, or
 * 0 when it fails. */
int64_t __catalyst__remote__upload(int64_t session, void *desc, size_t rank, size_t elem_size);

/* launch(), where input i is resident input_residents[i] when that is not
 * 0 (input_descs[i] is then not read, and may be NULL; input_ranks[i] and
 * input_elem_sizes[i] must be the resident's), and output i stays in the
 * executor when kept_outputs[i] is not 0: that entry then holds the new
 * resident's handle, or 0 when the launch failed, and the output's
 * descriptor its shape with NULL pointers. Either array may be NULL. */
void __catalyst__remote__launch_residents(int64_t session, const char *entry_symbol,
                                          const char *object, size_t num_inputs,
                                          void *const *input_descs, const size_t *input_ranks,
                                          const size_t *input_elem_sizes, size_t num_outputs,
                                          void *const *output_descs, const size_t *output_ranks,
                                          const size_t *output_elem_sizes,
                                          const int64_t *input_residents, int64_t *kept_outputs);

/* Brings a resident's values back, the resident staying: desc (of its rank
 * and element size) is rewritten to point at them, dense, in buffer when
 * it is not NULL and its bytes hold them, else in a fresh buffer as a
 * launch's output. Returns 0, or -1 with desc zeroed. */
int64_t __catalyst__remote__fetch(int64_t resident, void *desc, size_t rank, size_t elem_size,
                                  void *buffer, size_t bytes);

/* Frees a resident in the executor; its handle is then invalid. Returns 0,
 * or -1 (a released or unknown handle among other failures). */
int64_t __catalyst__remote__release(int64_t resident);

/* Starts an entry without memref arguments; await() joins it. */
int64_t __catalyst__remote__launch_async(int64_t session, const char *entry_symbol,
                                         const char *object);

/* Queues a launch with memref arguments, as launch() takes them, and returns
 * a token for await(). A session's launches run in order on a thread of its
 * own, so launches to different executors overlap. The descriptors must stay
 * valid until await() returns; the outputs are rewritten by then. */
int64_t __catalyst__remote__launch_async_memrefs(
    int64_t session, const char *entry_symbol, const char *object, size_t num_inputs,
    void *const *input_descs, const size_t *input_ranks, const size_t *input_elem_sizes,
    size_t num_outputs, void *const *output_descs, const size_t *output_ranks,
    const size_t *output_elem_sizes);
/* A token never issued, or already awaited, returns at once. */
void __catalyst__remote__await(int64_t token);

/* Calls `symbol` in the executor process as an ORC wrapper function. The
 * result is a malloc'ed buffer released by free_result; an empty result is
 * NULL with size 0, and a NULL out_buf discards the result. */
int32_t __catalyst__remote__call_wrapper(int64_t session, const char *symbol, const char *args_buf,
                                         size_t args_size, void **out_buf, size_t *out_size);
void __catalyst__remote__free_result(void *buf);

/* Joins the session's async work and ends it. Closing twice is harmless. */
int64_t __catalyst__remote__close(int64_t session);

/* One launch's counters and phase times (nanoseconds); see Stats.h. */
struct catalyst_remote_launch_stats {
  uint64_t round_trips;
  uint64_t messages;
  uint64_t bytes_sent;
  uint64_t bytes_received;
  uint64_t host_copy_bytes;
  uint64_t executor_copy_bytes;
  uint64_t slab_in_use;
  uint64_t slab_high_water;
  uint64_t plan_ns;
  uint64_t send_ns;
  uint64_t copy_in_ns;
  uint64_t kernel_ns;
  uint64_t copy_out_ns;
  uint64_t receive_ns;
  uint64_t rewrite_ns;
};

struct catalyst_remote_stats {
  uint64_t launches;
  struct catalyst_remote_launch_stats last;
  struct catalyst_remote_launch_stats total;
  /* "naive", "batched" or "zerocopy": what this session's launches use. */
  const char *strategy;
  /* "tcp"; "unix", a socket file (unix:PATH); or "local": the local socket
   * of an executor on this machine, with zero-copy payloads in memory both
   * processes map. */
  const char *transport;
};

/* Fills *out with the session's counters. Returns 0, or -1 on failure.
 * The strategy a session uses comes from CATALYST_REMOTE_STRATEGY
 * (naive|batched|zerocopy) at open, its transport from
 * CATALYST_REMOTE_TRANSPORT (auto, the default: shared memory with an
 * executor on this machine that offers it, else the address's own
 * connection; tcp: the address's own connection; local: the local socket
 * or fail; shm: the name of local before 0.1.0); CATALYST_REMOTE_PROFILE=1 prints each launch's
 * counters to stderr; CATALYST_REMOTE_TRACE=FILE.json writes every session's calls and launches,
 * their phases on host and executor, as a Chrome trace (Perfetto opens it; "%p" in FILE stands for
 * the process id). */
int32_t __catalyst__remote__stats(int64_t session, struct catalyst_remote_stats *out);

/* This thread's most recent failure message, or "". */
const char *__catalyst__remote__last_error(void);

/* Installs the failure handler of this prefix's functions only. NULL
 * restores the prefix's default: print and abort here, throw for
 * __catalyst__executor__set_failure_handler. */
void __catalyst__remote__set_failure_handler(void (*handler)(const char *message));

/* Where host output buffers come from for sessions opened afterwards.
 * NULL alloc restores the default: Catalyst's __catalyst__rt__alloc_managed
 * when the process defines it, else malloc. */
void __catalyst__remote__set_output_allocator(void *(*alloc)(size_t), void (*release)(void *));

#ifdef __cplusplus
}
#endif

#endif
