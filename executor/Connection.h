//===- Connection.h - Serving one host over one socket ----------*- C++ -*-===//

#ifndef CATALYST_REMOTE_EXECUTOR_CONNECTION_H
#define CATALYST_REMOTE_EXECUTOR_CONNECTION_H

#include "Services.h"
#include "wire/Handshake.h"
#include "wire/Secret.h"
#include "wire/SendMark.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace catalyst::remote::executor {

struct ConnectionOptions {
  ServiceOptions Services;
  uint64_t MaxMessageSize = uint64_t(8) << 30;
  unsigned Workers = 4;
  // The shared secret a host must prove it knows; empty: none asked. The
  // listener keeps it; a connection process wipes its copy of the bytes
  // once the host has proved itself, before any kernel runs.
  SecretBytes Secret;
  // How long a peer has to authenticate, or without a secret to send its
  // whole first message, before it is dropped (the listener enforces it).
  std::chrono::milliseconds HandshakeTimeout{10000};
  // Executor memory (code, launch slabs and residents) one host may reserve.
  uint64_t MaxReservedBytes = uint64_t(16) << 30;
  // Of it, what one host may keep as resident tensors (--max-resident-mib).
  uint64_t MaxResidentBytes = uint64_t(8) << 30;
  // Kernels' freed memory kept faulted in for the next launch (Retention.h).
  uint64_t RetainedBytes = uint64_t(1) << 30;
  // Where to write a byte once a peer that had to earn it is admitted, to
  // wake the listener (which then counts it as a session); -1: nowhere.
  int AdmittedFd = -1;
  // What carries sessions over TCP once the host proved itself (--wire):
  // TLS needs a secret. Socket files and the local socket stay plain.
  wire::WireMode Wire = wire::WireMode::Plain;
};

// How one connection's bytes travel: plain, or in TLS records keyed by
// Key (derived from the secret and the handshake's nonces, then wiped).
struct ConnectionWire {
  bool Tls = false;
  wire::Psk Key{};
};

// What a connection process leaves for its listener, in memory they share,
// to be read after the process is gone: whether it ended its session itself
// (else it died: a kernel called exit() or _exit(), or a signal killed it),
// and where it was in writing a message (a stream cut in a message's middle
// takes nothing more).
//
// Admitted: the host authenticated (the listener checks it before it forks)
// or, without a token, its first message has fully arrived. Until then the
// peer counts against the startup budget, not as a session, and the
// listener ends the process at the handshake deadline.
struct ConnectionRecord {
  std::atomic<bool> Ended{false};
  std::atomic<bool> Admitted{false};
  wire::SendMark Sending;
};

// The exit status of a connection process whose peer sent something other
// than a first message and was never admitted.
inline constexpr int NeverAdmitted = 4;

// Runs an EPC server on Fd (owned), whose host authenticated already when a
// secret is set, until the host hangs up, between the plugins'
// __catalyst__rt__initialize/__catalyst__rt__finalize, and removes the
// connection's assets. Returns the process exit status. Record is shared
// with the listener. Over TLS the TLS handshake runs first, by the
// handshake timeout; Wire's key is wiped once it is done.
int serveConnection(int Fd, const std::string &Peer, const ConnectionOptions &Options,
                    ConnectionWire &Wire, ConnectionRecord &Record);

} // namespace catalyst::remote::executor

#endif
