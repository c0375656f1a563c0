//===- Connect.h - Reaching an executor at its address ----------*- C++ -*-===//
//
// An executor's address is "HOST:PORT", "[v6addr]:PORT", or "unix:PATH", a
// socket file (wire/SocketFile.h).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_CONNECT_H
#define CATALYST_REMOTE_SESSION_CONNECT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <string>

namespace catalyst::remote {

struct HostPort {
  std::string Host;
  std::string Port;
};

// Splits "host:port" or "[v6addr]:port".
llvm::Expected<HostPort> parseHostPort(llvm::StringRef Address);

// Connects to Address, trying each resolved address in turn, and returns a
// blocking socket with TCP_NODELAY set. Gives up after Timeout.
llvm::Expected<int> connectTcp(llvm::StringRef Address, std::chrono::milliseconds Timeout);

// Connects to Address, TCP or unix:PATH, within Timeout: a blocking socket.
llvm::Expected<int> connectTo(llvm::StringRef Address, std::chrono::milliseconds Timeout);

} // namespace catalyst::remote

#endif
