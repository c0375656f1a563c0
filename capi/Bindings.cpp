//===- Bindings.cpp - The C ABI for language bindings ---------------------===//
//
// RemoteBindings.h's functions: Calls.h's work, each failure returned as
// its kind with the message left in this thread's last error.
//
//===----------------------------------------------------------------------===//

#include "Calls.h"
#include "catalyst/remote/Failure.h"
#include "catalyst/remote/RemoteBindings.h"

#include "llvm/ADT/StringRef.h"

#include <cstdlib>
#include <cstring>

using namespace catalyst::remote;
using namespace catalyst::remote::capi;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {

int32_t statusOf(Error Err) {
  if (!Err)
    return CATALYST_REMOTE_OK;
  FailureReport R = reportFailure(std::move(Err));
  setLastError(std::move(R.Message));
  return static_cast<int32_t>(R.Kind);
}

Error badOption(StringRef Option, const llvm::Twine &Why) {
  return makeFailure(FailureKind::BadArgument, "open: option '" + Option + "': " + Why);
}

// Err, from reading Option's value, as the caller's failure: its kind kept
// (a refused token file is an authentication failure), else a bad argument.
Error inOption(StringRef Option, Error Err) {
  FailureReport R = reportFailure(std::move(Err));
  FailureKind Kind = R.Kind == FailureKind::Other ? FailureKind::BadArgument : R.Kind;
  return makeFailure(Kind, "open: option '" + Option + "': " + R.Message);
}

Error notNumber(uint64_t Max) {
  return makeFailure(FailureKind::BadArgument, "not a whole number from 0 to " + llvm::Twine(Max));
}

Expected<uint64_t> number(StringRef Value, uint64_t Max) {
  uint64_t N;
  if (Value.getAsInteger(10, N) || N > Max)
    return notNumber(Max);
  return N;
}

Expected<bool> flag(StringRef Value) {
  if (Value != "0" && Value != "1")
    return makeFailure(FailureKind::BadArgument, "not 0 or 1");
  return Value == "1";
}

Expected<std::chrono::milliseconds> millis(StringRef Value) {
  auto N = number(Value, uint64_t(1) << 40);
  if (!N)
    return N.takeError();
  return std::chrono::milliseconds(*N);
}

// Assigns what Parse makes of Option's value to Out.
template <typename T, typename Fn> Error assign(T &Out, StringRef Option, Fn Parse) {
  auto V = Parse();
  if (!V)
    return inOption(Option, V.takeError());
  Out = std::move(*V);
  return Error::success();
}

Error applySessionOption(StringRef Name, StringRef Value, StringRef Option, SessionOptions &S) {
  if (Name == "token") {
    S.Secret = SecretBytes::copyOf(Value);
    return Error::success();
  }
  if (Name == "token_file")
    return assign(S.Secret, Option, [&] { return readTokenFile(Value); });
  if (Name == "strategy")
    return assign(S.Strategy, Option, [&] { return parseStrategy(Value); });
  if (Name == "transport")
    return assign(S.Transport, Option, [&] { return parseTransport(Value); });
  if (Name == "wire")
    return assign(S.Wire, Option, [&] { return parseWire(Value); });
  if (Name == "handshake_timeout_ms")
    return assign(S.HandshakeTimeout, Option, [&] { return millis(Value); });
  if (Name == "liveness_ms")
    return assign(S.LivenessTimeout, Option, [&] { return millis(Value); });
  if (Name == "launch_timeout_ms")
    return assign(S.LaunchTimeout, Option, [&] { return millis(Value); });
  if (Name == "max_output_mib") {
    uint64_t MiB = 0;
    if (auto Err = assign(MiB, Option, [&] { return number(Value, uint64_t(1) << 30); }))
      return Err;
    S.MaxOutputBytes = MiB << 20;
    return Error::success();
  }
  if (Name == "profile")
    return assign(S.Profile, Option, [&] { return flag(Value); });
  if (Name == "trace") {
    S.TracePath = Value.str();
    return Error::success();
  }
  return badOption(Option, "not one this library knows (token, token_file, strategy, "
                           "transport, wire, handshake_timeout_ms, liveness_ms, "
                           "launch_timeout_ms, max_output_mib, profile, trace, pool_min, "
                           "pool_retry)");
}

Error applyOption(StringRef Option, PoolOptions &Opts) {
  auto [Name, Value] = Option.split('=');
  if (Name.size() == Option.size())
    return badOption(Option, "not name=value");
  if (Name == "pool_min") {
    if (auto Err = assign(Opts.MinMembers, Option, [&] { return number(Value, 100000); }))
      return Err;
    if (Opts.MinMembers == 0)
      return badOption(Option, "a pool needs at least 1 member");
    return Error::success();
  }
  if (Name == "pool_retry")
    return assign(Opts.RetryOnMemberLoss, Option, [&] { return flag(Value); });
  return applySessionOption(Name, Value, Option, Opts.Member);
}

// The environment's options, then the caller's over them; outputs in
// malloc'ed buffers, which a binding frees with free().
Expected<PoolOptions> bindingOptions(const char *Addr, const char *const *Options, size_t N) {
  PoolOptions Opts;
  Opts.Member.Outputs = {std::malloc, std::free};
  auto Member = optionsFromEnvironment(std::move(Opts.Member));
  if (!Member)
    return withContext("open", Member.takeError());
  Opts.Member = std::move(*Member);
  if (Addr && Pool::isPoolAddress(Addr)) {
    auto Pooled = poolOptionsFromEnvironment(std::move(Opts));
    if (!Pooled)
      return withContext("open", Pooled.takeError());
    Opts = std::move(*Pooled);
  }
  if (N && !Options)
    return makeFailure(FailureKind::BadArgument,
                       "open: " + llvm::Twine(N) + " options but a null options array");
  for (size_t I = 0; I < N; ++I) {
    if (!Options[I])
      return makeFailure(FailureKind::BadArgument, "open: option " + llvm::Twine(I) + " is null");
    if (auto Err = applyOption(Options[I], Opts))
      return Err;
  }
  return Opts;
}

} // namespace

#define CATALYST_REMOTE_BINDING extern "C" __attribute__((visibility("default")))

CATALYST_REMOTE_BINDING int32_t catalyst_remote_open(const char *addr, const char *const *options,
                                                     size_t num_options, int64_t *handle) {
  if (!handle)
    return statusOf(makeFailure(FailureKind::BadArgument, "open: null handle output"));
  *handle = 0;
  auto Opts = bindingOptions(addr, options, num_options);
  if (!Opts)
    return statusOf(Opts.takeError());
  auto Opened = openOwn(addr, *Opts);
  if (!Opened)
    return statusOf(Opened.takeError());
  *handle = *Opened;
  return CATALYST_REMOTE_OK;
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_send_binary(int64_t handle, const char *path,
                                                            uint32_t format) {
  return statusOf(sendBinary(handle, path, format));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_launch(
    int64_t handle, const char *entry_symbol, const char *object, size_t num_inputs,
    void *const *input_descs, const size_t *input_ranks, const size_t *input_elem_sizes,
    size_t num_outputs, void *const *output_descs, const size_t *output_ranks,
    const size_t *output_elem_sizes) {
  CLaunch C{entry_symbol,     object,      num_inputs,   input_descs,  input_ranks,
            input_elem_sizes, num_outputs, output_descs, output_ranks, output_elem_sizes};
  return statusOf(runLaunch(handle, C, "launch"));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_upload(int64_t handle, void *desc, size_t rank,
                                                       size_t elem_size, int64_t *resident) {
  if (!resident)
    return statusOf(makeFailure(FailureKind::BadArgument, "upload: null resident output"));
  *resident = 0;
  auto Uploaded = uploadTensor(handle, desc, rank, elem_size);
  if (!Uploaded)
    return statusOf(Uploaded.takeError());
  *resident = *Uploaded;
  return CATALYST_REMOTE_OK;
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_launch_residents(
    int64_t handle, const char *entry_symbol, const char *object, size_t num_inputs,
    void *const *input_descs, const size_t *input_ranks, const size_t *input_elem_sizes,
    size_t num_outputs, void *const *output_descs, const size_t *output_ranks,
    const size_t *output_elem_sizes, const int64_t *input_residents, int64_t *kept_outputs) {
  CLaunch C{entry_symbol,     object,      num_inputs,   input_descs,  input_ranks,
            input_elem_sizes, num_outputs, output_descs, output_ranks, output_elem_sizes};
  C.InputResidents = input_residents;
  C.KeptOutputs = kept_outputs;
  return statusOf(runLaunch(handle, C, "launch_residents"));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_fetch(int64_t resident, void *desc, size_t rank,
                                                      size_t elem_size, void *buffer,
                                                      size_t bytes) {
  return statusOf(fetchResident(resident, desc, rank, elem_size, buffer, bytes));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_release(int64_t resident) {
  return statusOf(releaseResident(resident));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_call_wrapper(int64_t handle, const char *symbol,
                                                             const char *args_buf, size_t args_size,
                                                             void **out_buf, size_t *out_size) {
  return statusOf(callWrapper(handle, symbol, args_buf, args_size, out_buf, out_size));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_describe(int64_t handle, char **json) {
  if (!json)
    return statusOf(makeFailure(FailureKind::BadArgument, "describe: null output"));
  *json = nullptr;
  auto Text = describeTarget(handle);
  if (!Text)
    return statusOf(Text.takeError());
  char *Out = static_cast<char *>(std::malloc(Text->size() + 1));
  if (!Out)
    return statusOf(makeFailure(FailureKind::Other, "describe: out of memory"));
  std::memcpy(Out, Text->c_str(), Text->size() + 1);
  *json = Out;
  return CATALYST_REMOTE_OK;
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_start_trace(int64_t handle, const char *path) {
  return statusOf(startTrace(handle, path));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_stop_trace(int64_t handle) {
  return statusOf(stopTrace(handle));
}

CATALYST_REMOTE_BINDING int32_t catalyst_remote_close(int64_t handle) {
  return statusOf(closeTarget(handle));
}
