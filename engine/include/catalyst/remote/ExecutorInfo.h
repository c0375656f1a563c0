//===- ExecutorInfo.h - What the executor at the other end offers -*- C++ -*-===//

#ifndef CATALYST_REMOTE_EXECUTORINFO_H
#define CATALYST_REMOTE_EXECUTORINFO_H

#include "catalyst/remote/SessionOptions.h"

#include <cstdint>
#include <string>
#include <vector>

namespace catalyst::remote {

// As the executor announced it when the session opened.
struct ExecutorInfo {
  // Its release ("0.1.0"), printable characters only; empty when it does
  // not say (Catalyst's own executor, or one started with --upstream-only).
  std::string Version;
  // This project's protocol version; 0 for an executor that offers only
  // Catalyst's upstream services.
  uint32_t Protocol = 0;
  // The strategies launches could use with it, best first (Naive always).
  std::vector<Strategy> Strategies;
  // It sends heartbeats while it works, so that a busy executor can be told
  // from a dead one (SessionOptions::LivenessTimeout).
  bool Heartbeats = false;
  // It reports a wrapper function's own error to Session::callWrapper.
  bool WrapperErrors = false;
  // Both ends proved that they know the shared secret (SessionOptions::Secret).
  bool Authenticated = false;
};

} // namespace catalyst::remote

#endif
