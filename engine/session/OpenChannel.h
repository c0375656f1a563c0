//===- OpenChannel.h - The connection a session runs over ----------*- C++ -*-===//
//
// A session starts over TCP, which reaches an executor anywhere, or over a
// socket file (unix:PATH), which ssh may relay from anywhere too. When the
// executor runs on this machine and offers its local socket
// (wire/LocalOffer.h), and the session's options allow, the host moves to
// that socket before either side has set anything up for the first
// connection: it authenticates there as it would have there, then reads
// the first setup message out and hangs up, which ends that connection's
// process quietly (it never saw a message, so never initialized Catalyst's
// runtime). Over the local socket the session works as over TCP, and
// zero-copy launches move their payloads through shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_OPENCHANNEL_H
#define CATALYST_REMOTE_SESSION_OPENCHANNEL_H

#include "catalyst/remote/SessionOptions.h"
#include "wire/TlsStream.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>

namespace catalyst::remote {

struct Channel {
  int Fd = -1;          // authenticated, the executor's setup message waiting on it
  TransportKind Kind{}; // Tcp, SocketFile or Local
  // The TLS stream over Fd the session's bytes travel in; null when plain.
  std::unique_ptr<wire::TlsStream> Tls;
};

// Connects to Address and authenticates the executor, choosing the
// transport as Options.Transport says, all by the deadline.
llvm::Expected<Channel> openChannel(llvm::StringRef Address, const SessionOptions &Options,
                                    std::chrono::steady_clock::time_point By);

} // namespace catalyst::remote

#endif
