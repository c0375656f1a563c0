//===- Connection.h - Serving one host over one socket ----------*- C++ -*-===//

#ifndef CATALYST_REMOTE_EXECUTOR_CONNECTION_H
#define CATALYST_REMOTE_EXECUTOR_CONNECTION_H

#include "Services.h"

#include <cstdint>
#include <string>

namespace catalyst::remote::executor {

struct ConnectionOptions {
  ServiceOptions Services;
  uint64_t MaxMessageSize = uint64_t(8) << 30;
  unsigned Workers = 4;
};

// Runs an EPC server on Fd (owned) until the host hangs up, between the
// plugins' __catalyst__rt__initialize/__catalyst__rt__finalize, then removes
// the connection's assets. Returns the process exit status.
int serveConnection(int Fd, const std::string &Peer, const ConnectionOptions &Options);

} // namespace catalyst::remote::executor

#endif
