//===- SessionOptions.cpp - How a session is set up -----------------------===//

#include "catalyst/remote/SessionOptions.h"

#include "catalyst/remote/Failure.h"
#include "wire/Secret.h"

#include <cstdlib>
#include <cstring>
#include <optional>

using namespace llvm;

namespace catalyst::remote {

namespace {

// The number in the environment variable Name, when it is set: one from
// Min to Max, else an error saying it is not What.
Expected<std::optional<uint64_t>> numberFromEnvironment(const char *Name, uint64_t Min,
                                                        uint64_t Max, const char *What) {
  const char *Text = std::getenv(Name);
  if (!Text || !*Text)
    return std::nullopt;
  uint64_t N = 0;
  if (StringRef(Text).getAsInteger(10, N) || N < Min || N > Max)
    return makeFailure(FailureKind::BadArgument, Twine(Name) + "='" + Text + "' is not " + What);
  return N;
}

// A duration in milliseconds from the environment variable Name, if set.
Error durationFromEnvironment(const char *Name, std::chrono::milliseconds &Out) {
  auto Ms = numberFromEnvironment(Name, 0, uint64_t(1) << 40, "a number of milliseconds");
  if (!Ms)
    return Ms.takeError();
  if (*Ms)
    Out = std::chrono::milliseconds(**Ms);
  return Error::success();
}

// A size in MiB from the environment variable Name, if set, as bytes.
Error mibFromEnvironment(const char *Name, uint64_t &Out) {
  auto Mib = numberFromEnvironment(Name, 1, uint64_t(1) << 40, "a size in MiB (1 or more)");
  if (!Mib)
    return Mib.takeError();
  if (*Mib)
    Out = **Mib << 20;
  return Error::success();
}

// A variable set but empty (as `$(cat missing-file)` leaves it) is a
// mistake, not a wish to go without a secret: it would turn the check of
// the executor off unseen.
Expected<const char *> nonEmptyVariable(const char *Name) {
  const char *Value = std::getenv(Name);
  if (Value && !*Value)
    return makeFailure(FailureKind::BadArgument,
                       Twine(Name) +
                           " is set but empty; unset it to open sessions without a secret");
  return Value;
}

// CATALYST_REMOTE_TOKEN_FILE, else CATALYST_REMOTE_TOKEN; Secret stays as
// it is when neither is set.
Error secretFromEnvironment(SecretBytes &Secret) {
  auto File = nonEmptyVariable("CATALYST_REMOTE_TOKEN_FILE");
  if (!File)
    return File.takeError();
  auto Token = nonEmptyVariable("CATALYST_REMOTE_TOKEN");
  if (!Token)
    return Token.takeError();
  if (*File) {
    auto Read = readTokenFile(*File);
    if (!Read)
      return Read.takeError();
    Secret = std::move(*Read);
  } else if (*Token) {
    // The variable itself stays: the environment is the embedding
    // program's, and the next session opened reads it again.
    Secret = SecretBytes::copyOf(*Token);
  }
  return Error::success();
}

} // namespace

Expected<SessionOptions> optionsFromEnvironment(SessionOptions Opts) {
  if (const char *S = std::getenv("CATALYST_REMOTE_STRATEGY"); S && *S) {
    auto Parsed = parseStrategy(S);
    if (!Parsed)
      return Parsed.takeError();
    Opts.Strategy = *Parsed;
  }
  if (const char *T = std::getenv("CATALYST_REMOTE_TRANSPORT"); T && *T) {
    auto Parsed = parseTransport(T);
    if (!Parsed)
      return Parsed.takeError();
    Opts.Transport = *Parsed;
  }
  if (const char *W = std::getenv("CATALYST_REMOTE_WIRE"); W && *W) {
    auto Parsed = parseWire(W);
    if (!Parsed)
      return withContext("CATALYST_REMOTE_WIRE", Parsed.takeError());
    Opts.Wire = *Parsed;
  }
  if (auto Err = secretFromEnvironment(Opts.Secret))
    return Err;
  if (auto Err = durationFromEnvironment("CATALYST_REMOTE_LIVENESS_MS", Opts.LivenessTimeout))
    return Err;
  if (auto Err = durationFromEnvironment("CATALYST_REMOTE_LAUNCH_TIMEOUT_MS", Opts.LaunchTimeout))
    return Err;
  if (auto Err = mibFromEnvironment("CATALYST_REMOTE_MAX_OUTPUT_MIB", Opts.MaxOutputBytes))
    return Err;
  const char *Profile = std::getenv("CATALYST_REMOTE_PROFILE");
  Opts.Profile = Profile && *Profile && std::strcmp(Profile, "0") != 0;
  if (const char *Trace = std::getenv("CATALYST_REMOTE_TRACE"))
    Opts.TracePath = Trace;
  return Opts;
}

Expected<SecretBytes> readTokenFile(StringRef Path) {
  return wire::readTokenFile(Path);
}

const char *strategyName(Strategy S) {
  switch (S) {
  case Strategy::Auto:
    return "auto";
  case Strategy::Naive:
    return "naive";
  case Strategy::Batched:
    return "batched";
  case Strategy::ZeroCopy:
    return "zerocopy";
  }
  return "?";
}

Expected<Strategy> parseStrategy(StringRef Name) {
  for (Strategy S : {Strategy::Auto, Strategy::Naive, Strategy::Batched, Strategy::ZeroCopy})
    if (Name == strategyName(S))
      return S;
  return makeFailure(FailureKind::BadArgument, "unknown transfer strategy '" + Name +
                                                   "': use naive, batched, zerocopy or auto");
}

const char *transportName(TransportKind K) {
  switch (K) {
  case TransportKind::Auto:
    return "auto";
  case TransportKind::Tcp:
    return "tcp";
  case TransportKind::SocketFile:
    return "unix";
  case TransportKind::Local:
    return "local";
  }
  return "?";
}

const char *wireName(WireProtection W) {
  switch (W) {
  case WireProtection::Auto:
    return "auto";
  case WireProtection::Plain:
    return "plain";
  case WireProtection::Tls:
    return "tls";
  }
  return "?";
}

Expected<WireProtection> parseWire(StringRef Name) {
  for (WireProtection W : {WireProtection::Auto, WireProtection::Plain, WireProtection::Tls})
    if (Name == wireName(W))
      return W;
  return makeFailure(FailureKind::BadArgument,
                     "unknown wire protection '" + Name + "': use auto, plain or tls");
}

Expected<TransportKind> parseTransport(StringRef Name) {
  for (TransportKind K : {TransportKind::Auto, TransportKind::Tcp, TransportKind::Local})
    if (Name == transportName(K))
      return K;
  if (Name == "shm") // 0.1.0 keeps the name from before it
    return TransportKind::Local;
  return makeFailure(FailureKind::BadArgument,
                     "unknown transport '" + Name + "': use auto, tcp or local");
}

} // namespace catalyst::remote
