//===- SessionOptions.h - How a session is set up ---------------*- C++ -*-===//

#ifndef CATALYST_REMOTE_SESSIONOPTIONS_H
#define CATALYST_REMOTE_SESSIONOPTIONS_H

#include "catalyst/remote/OutputAllocator.h"

#include <chrono>
#include <cstdint>

namespace catalyst::remote {

struct SessionOptions {
  // Connecting and the EPC handshake must both finish within this.
  std::chrono::milliseconds HandshakeTimeout{10000};
  // Address space reserved on the executor for linked code, committed lazily.
  uint64_t CodeSlabSize = uint64_t(1) << 30;
  // The largest message either side may send or accept.
  uint64_t MaxMessageSize = uint64_t(8) << 30;
  // Where host copies of launch outputs come from; an empty one uses
  // defaultOutputAllocator().
  OutputAllocator Outputs;
};

} // namespace catalyst::remote

#endif
