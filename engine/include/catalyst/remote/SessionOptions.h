//===- SessionOptions.h - How a session is set up ---------------*- C++ -*-===//

#ifndef CATALYST_REMOTE_SESSIONOPTIONS_H
#define CATALYST_REMOTE_SESSIONOPTIONS_H

#include "catalyst/remote/OutputAllocator.h"
#include "catalyst/remote/SecretBytes.h"
#include "catalyst/remote/Stats.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace catalyst::remote {

// How a launch moves memrefs. All give identical results.
//   Naive:    Catalyst's upstream protocol, a round trip per buffer step.
//   Batched:  standard ORC memory services and a host-managed slab; at most
//             three round trips per launch.
//   ZeroCopy: one round trip; payloads travel out of line, straight between
//             memref buffers and the socket.
// Auto picks ZeroCopy, or the best the executor supports.
enum class Strategy { Auto, Naive, Batched, ZeroCopy };

// What carries a session's bytes once both ends proved they know the
// secret. Tls: TLS 1.3 keyed by the secret, so that whoever relays the
// connection can neither read nor alter it. Plain: the bytes as they are.
// Either must match the executor's --wire, or the session fails, naming
// both. Auto: what the executor says, which its proof covers (no relay
// can change it): TLS over TCP with a token unless it was started with
// --wire plain; plain without a secret and over socket files and the
// local socket, which are always plain: no network lies between, and on a
// socket file both ends check the peer's user (SO_PEERCRED); on the local
// socket the host checks that the listener that made the offer serves it.
enum class WireProtection { Auto, Plain, Tls };

// Reads a token file (as the executor's --token-file): its bytes, without
// trailing white space, are the secret; refused when its group or others
// may access it. The buffer it was read into is wiped.
llvm::Expected<SecretBytes> readTokenFile(llvm::StringRef Path);

const char *strategyName(Strategy S);
// "auto", "tcp", "unix" or "local". parseTransport() takes what may be
// asked for: "auto", "tcp", "local", and "shm", the name of "local" before
// 0.1.0, kept for 0.1.0.
const char *transportName(TransportKind K);
llvm::Expected<TransportKind> parseTransport(llvm::StringRef Name);
// "naive", "batched", "zerocopy" or "auto".
llvm::Expected<Strategy> parseStrategy(llvm::StringRef Name);
// "auto", "plain" or "tls".
const char *wireName(WireProtection W);
llvm::Expected<WireProtection> parseWire(llvm::StringRef Name);

struct SessionOptions {
  // Connecting, authenticating and the EPC handshake: each wait on the
  // executor in them ends once this has passed since the open began.
  // Resolving a host name is not bounded by it (the system resolver has
  // timeouts of its own).
  std::chrono::milliseconds HandshakeTimeout{10000};
  // An executor that sends nothing (no reply, no heartbeat) for this long
  // while a reply is due, or that takes none of a request the host is
  // sending and says nothing for this long, is declared dead: the call
  // waiting fails saying so and the session is closed. A kernel that runs
  // for hours is never cut: the executor sends heartbeats while it works;
  // nor is a transfer that takes longer: its bytes show the executor alive.
  // Zero waits forever, as does a session with an executor that sends no
  // heartbeats (Catalyst's own). Heartbeats come at most every 10 ms, so a
  // timeout under 40 ms counts as 40 ms.
  std::chrono::milliseconds LivenessTimeout{10000};
  // A launch that has not finished after this long fails, and since its
  // kernel cannot be interrupted, its connection is closed, which ends the
  // executor's connection process too. Zero: no deadline.
  std::chrono::milliseconds LaunchTimeout{0};
  // The secret shared with the executor (its --token-file), which both ends
  // prove they know without sending it; empty: none. An executor that asks
  // for one is refused without it, and with one, an executor that does not
  // ask is refused. A session holds it only until it is open: once the
  // caller's copies are gone too, its bytes are wiped (SecretBytes.h).
  SecretBytes Secret;
  // Address space reserved on the executor for linked code, committed lazily.
  uint64_t CodeSlabSize = uint64_t(1) << 30;
  // The largest message either side may send or accept.
  uint64_t MaxMessageSize = uint64_t(8) << 30;
  // The most one launch's outputs may take on the host, together (lent
  // buffers included): the executor says how large they are, and a launch
  // whose outputs would take more fails before any is allocated, naming
  // this option (CATALYST_REMOTE_MAX_OUTPUT_MIB through the C ABI).
  uint64_t MaxOutputBytes = uint64_t(16) << 30;
  // Where host copies of launch outputs come from; an empty one uses
  // defaultOutputAllocator().
  OutputAllocator Outputs;
  // Falls back (ZeroCopy to Batched to Naive) when the executor lacks it.
  remote::Strategy Strategy = Strategy::Auto;
  // Auto: the executor's local socket when it offers one and runs on this
  // machine (same boot id, its local socket reachable), else the
  // connection to the address given, silently. Local: the local socket or
  // an error saying why not. Tcp: the connection to the address given
  // (TCP, or a unix:PATH socket file), never trying the local socket
  // (CATALYST_REMOTE_TRANSPORT through the C ABI).
  TransportKind Transport = TransportKind::Auto;
  // CATALYST_REMOTE_WIRE through the C ABI.
  WireProtection Wire = WireProtection::Auto;
  // Executor memory for launch buffers: the first slab, and the most the
  // host may reserve (address space; pages are committed as they are used).
  uint64_t SlabInitial = uint64_t(64) << 20;
  uint64_t SlabCap = uint64_t(64) << 30;
  // Print each launch's counters and phase times to stderr.
  bool Profile = false;
  // Write Chrome trace-event JSON (Perfetto, chrome://tracing) here: the
  // session's opening, links, asset sends, each launch with its phases on
  // the host and on the executor, and its closing. "%p" stands for the
  // process id. Sessions of one process may share a path: the first
  // truncates the file, the others add to it. Empty: no trace, and no cost.
  std::string TracePath;
};

// Opts with what the environment sets, as every embedder of the library
// reads it: CATALYST_REMOTE_STRATEGY (a strategy's name),
// CATALYST_REMOTE_TOKEN_FILE (read as readTokenFile does) or else
// CATALYST_REMOTE_TOKEN (the secret itself, which stays in the process's
// environment: the file is the better way), CATALYST_REMOTE_WIRE (auto,
// plain or tls), CATALYST_REMOTE_LIVENESS_MS,
// CATALYST_REMOTE_LAUNCH_TIMEOUT_MS, CATALYST_REMOTE_MAX_OUTPUT_MIB, and
// CATALYST_REMOTE_PROFILE (set and not "0": Profile). Fails on a value it
// cannot use, saying which.
llvm::Expected<SessionOptions> optionsFromEnvironment(SessionOptions Opts = {});

} // namespace catalyst::remote

#endif
