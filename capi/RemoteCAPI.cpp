//===- RemoteCAPI.cpp - The C ABI over the engine -------------------------===//
//
// Failure reporting; each call's work is in Calls.cpp and returns an Error,
// which the exported functions, one set per prefix, report at the very end,
// once every cleanup is done:
// __catalyst__remote__* through its failure handler (default: print and
// abort), __catalyst__executor__* by throwing, as Catalyst's runtime does,
// unless its caller installed a handler. Functions that cannot fail are
// defined once and aliased.
//
//===----------------------------------------------------------------------===//

#include "catalyst/remote/RemoteCAPI.h"

#include "Calls.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

using namespace catalyst::remote::capi;
using llvm::Error;
using llvm::Expected;

namespace {

// What __catalyst__executor__* throws where Catalyst's runtime throws its
// RuntimeException: a std::runtime_error whose what() is the message a
// failure handler would get.
class CallFailed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// How one prefix's functions report a failure: through the handler its
// caller installed, else its default. Any thread may install a handler
// (atomic) while others report, each on its own thread.
class Reporter {
public:
  explicit Reporter(bool Throws) : Throws(Throws) {}

  void setHandler(void (*H)(const char *)) { Handler = H; }

  // Records Err as this thread's last error and reports it; returns only
  // when an installed handler returns.
  void report(Error Err) {
    setLastError(llvm::toString(std::move(Err)));
    if (auto *H = Handler.load())
      return H(lastError());
    if (Throws)
      throw CallFailed(lastError());
    std::fprintf(stderr, "catalyst-remote: %s\n", lastError());
    std::abort();
  }

  // V's value, or Failed once its error is reported.
  template <typename T> T valueOr(Expected<T> V, T Failed) {
    if (V)
      return *V;
    report(V.takeError());
    return Failed;
  }

  // 0, or Failed once Err is reported.
  template <typename T> T statusOr(Error Err, T Failed) {
    if (!Err)
      return 0;
    report(std::move(Err));
    return Failed;
  }

  void check(Error Err) {
    if (Err)
      report(std::move(Err));
  }

private:
  std::atomic<void (*)(const char *)> Handler{nullptr};
  const bool Throws;
};

Reporter RemoteApi(/*Throws=*/false);
Reporter ExecutorApi(/*Throws=*/true);

CLaunch syncLaunch(const char *Entry, const char *Object, size_t NumInputs, void *const *InputDescs,
                   const size_t *InputRanks, const size_t *InputElemSizes, size_t NumOutputs,
                   void *const *OutputDescs, const size_t *OutputRanks,
                   const size_t *OutputElemSizes) {
  return {Entry,          Object,     NumInputs,   InputDescs,  InputRanks,
          InputElemSizes, NumOutputs, OutputDescs, OutputRanks, OutputElemSizes};
}

} // namespace

#define CATALYST_REMOTE_API extern "C" __attribute__((visibility("default")))
#define CATALYST_EXECUTOR_ALIAS(Name)                                                              \
  extern "C" __attribute__((visibility("default"), alias("__catalyst__remote__" #Name)))

// Each function that can fail, once per prefix: the same work, reported the
// prefix's way.
#define CATALYST_REMOTE_LAUNCH_PARAMS                                                              \
  int64_t session, const char *entry_symbol, const char *object, size_t num_inputs,                \
      void *const *input_descs, const size_t *input_ranks, const size_t *input_elem_sizes,         \
      size_t num_outputs, void *const *output_descs, const size_t *output_ranks,                   \
      const size_t *output_elem_sizes
#define CATALYST_REMOTE_LAUNCH_ARGS                                                                \
  entry_symbol, object, num_inputs, input_descs, input_ranks, input_elem_sizes, num_outputs,       \
      output_descs, output_ranks, output_elem_sizes

#define CATALYST_REMOTE_DEFINE_CALLS(PREFIX, API)                                                  \
  CATALYST_REMOTE_API int64_t PREFIX##open(const char *addr) {                                     \
    return API.valueOr<int64_t>(openShared(addr), 0);                                              \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##send_binary(int64_t session, const char *path,               \
                                                  uint32_t format) {                               \
    return API.statusOr<int64_t>(sendBinary(session, path, format), -1);                           \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##launch(CATALYST_REMOTE_LAUNCH_PARAMS) {                         \
    API.check(runLaunch(session, syncLaunch(CATALYST_REMOTE_LAUNCH_ARGS), "launch"));              \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##launch_into(                                                    \
      CATALYST_REMOTE_LAUNCH_PARAMS, void *const *output_buffers, const size_t *output_bytes) {    \
    CLaunch C = syncLaunch(CATALYST_REMOTE_LAUNCH_ARGS);                                           \
    C.IntoBuffers = output_buffers;                                                                \
    C.IntoBytes = output_bytes;                                                                    \
    API.check(runLaunch(session, C, "launch_into"));                                               \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##upload(int64_t session, void *desc, size_t rank,             \
                                             size_t elem_size) {                                   \
    return API.valueOr<int64_t>(uploadTensor(session, desc, rank, elem_size), 0);                  \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##launch_residents(                                               \
      CATALYST_REMOTE_LAUNCH_PARAMS, const int64_t *input_residents, int64_t *kept_outputs) {      \
    CLaunch C = syncLaunch(CATALYST_REMOTE_LAUNCH_ARGS);                                           \
    C.InputResidents = input_residents;                                                            \
    C.KeptOutputs = kept_outputs;                                                                  \
    API.check(runLaunch(session, C, "launch_residents"));                                          \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##fetch(int64_t resident, void *desc, size_t rank,             \
                                            size_t elem_size, void *buffer, size_t bytes) {        \
    return API.statusOr<int64_t>(fetchResident(resident, desc, rank, elem_size, buffer, bytes),    \
                                 -1);                                                              \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##release(int64_t resident) {                                  \
    return API.statusOr<int64_t>(releaseResident(resident), -1);                                   \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##launch_async(int64_t session, const char *entry_symbol,      \
                                                   const char *object) {                           \
    CLaunch C = syncLaunch(entry_symbol, object, 0, nullptr, nullptr, nullptr, 0, nullptr,         \
                           nullptr, nullptr);                                                      \
    return API.valueOr<int64_t>(queueLaunch(session, C, "launch_async"), 0);                       \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##launch_async_memrefs(CATALYST_REMOTE_LAUNCH_PARAMS) {        \
    CLaunch C = syncLaunch(CATALYST_REMOTE_LAUNCH_ARGS);                                           \
    return API.valueOr<int64_t>(queueLaunch(session, C, "launch_async_memrefs"), 0);               \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##await(int64_t token) {                                          \
    API.check(awaitLaunch(token));                                                                 \
  }                                                                                                \
  CATALYST_REMOTE_API int32_t PREFIX##call_wrapper(int64_t session, const char *symbol,            \
                                                   const char *args_buf, size_t args_size,         \
                                                   void **out_buf, size_t *out_size) {             \
    return API.statusOr<int32_t>(                                                                  \
        callWrapper(session, symbol, args_buf, args_size, out_buf, out_size), 1);                  \
  }                                                                                                \
  CATALYST_REMOTE_API int64_t PREFIX##close(int64_t session) {                                     \
    return API.statusOr<int64_t>(closeTarget(session), -1);                                        \
  }                                                                                                \
  CATALYST_REMOTE_API int32_t PREFIX##stats(int64_t session, struct catalyst_remote_stats *out) {  \
    return API.statusOr<int32_t>(readStats(session, out), -1);                                     \
  }                                                                                                \
  CATALYST_REMOTE_API void PREFIX##set_failure_handler(void (*handler)(const char *)) {            \
    API.setHandler(handler);                                                                       \
  }

CATALYST_REMOTE_DEFINE_CALLS(__catalyst__remote__, RemoteApi)
CATALYST_REMOTE_DEFINE_CALLS(__catalyst__executor__, ExecutorApi)

CATALYST_REMOTE_API void __catalyst__remote__free_result(void *buf) {
  std::free(buf);
}

CATALYST_REMOTE_API const char *__catalyst__remote__last_error(void) {
  return lastError();
}

CATALYST_REMOTE_API void __catalyst__remote__set_output_allocator(void *(*alloc)(size_t),
                                                                  void (*release)(void *)) {
  setOutputAllocator(alloc, release);
}

CATALYST_EXECUTOR_ALIAS(free_result) void __catalyst__executor__free_result(void *);
CATALYST_EXECUTOR_ALIAS(last_error) const char *__catalyst__executor__last_error(void);
CATALYST_EXECUTOR_ALIAS(set_output_allocator)
void __catalyst__executor__set_output_allocator(void *(*)(size_t), void (*)(void *));
