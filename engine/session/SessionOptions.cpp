//===- SessionOptions.cpp - How a session is set up -----------------------===//

#include "catalyst/remote/SessionOptions.h"

#include "../wire/Secret.h"

using namespace llvm;

namespace catalyst::remote {

Expected<std::string> readTokenFile(StringRef Path) {
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
  return createStringError(inconvertibleErrorCode(),
                           "unknown transfer strategy '%s': use naive, batched, zerocopy or auto",
                           Name.str().c_str());
}

const char *transportName(TransportKind K) {
  switch (K) {
  case TransportKind::Auto:
    return "auto";
  case TransportKind::Tcp:
    return "tcp";
  case TransportKind::Shm:
    return "shm";
  }
  return "?";
}

Expected<TransportKind> parseTransport(StringRef Name) {
  for (TransportKind K : {TransportKind::Auto, TransportKind::Tcp, TransportKind::Shm})
    if (Name == transportName(K))
      return K;
  return createStringError(inconvertibleErrorCode(), "unknown transport '%s': use auto, tcp or shm",
                           Name.str().c_str());
}

} // namespace catalyst::remote
