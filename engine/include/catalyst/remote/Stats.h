//===- Stats.h - What a session's launches cost -----------------*- C++ -*-===//
//
// Exact counters (round trips, messages, bytes, user-space payload copies,
// slab use) and phase times, per launch and summed over a session. Executor
// phases are measured on the executor and returned with the result; they
// stay zero where the executor cannot report them (the upstream protocol).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_STATS_H
#define CATALYST_REMOTE_STATS_H

#include <cstdint>

namespace catalyst::remote {

struct PhaseTimes {
  uint64_t PlanNs = 0;    // validating descriptors, planning placement
  uint64_t SendNs = 0;    // pushing the request and inputs
  uint64_t CopyInNs = 0;  // executor: inputs landing in its memory
  uint64_t KernelNs = 0;  // executor: the entry itself
  uint64_t CopyOutNs = 0; // executor: preparing and sending outputs
  uint64_t ReceiveNs = 0; // host: outputs landing in host buffers
  uint64_t RewriteNs = 0; // host: pointing descriptors at them

  PhaseTimes &operator+=(const PhaseTimes &O);
};

struct LaunchStats {
  uint64_t RoundTrips = 0;
  uint64_t Messages = 0;  // sent and received
  uint64_t BytesSent = 0; // framing included
  uint64_t BytesReceived = 0;
  uint64_t HostCopyBytes = 0;     // payload bytes copied in user space, host
  uint64_t ExecutorCopyBytes = 0; // payload bytes copied in user space, executor
  uint64_t SlabInUse = 0;         // executor slab bytes this launch placed
  uint64_t SlabHighWater = 0;     // most ever placed by one launch
  // Outputs received into host buffers prepared (allocated and faulted in)
  // while the launch ran, as the same entry's last launch foretold.
  uint64_t OutputsReady = 0;
  // Payload bytes that stayed off the link because they stay in the
  // executor (Resident.h): resident inputs read there, outputs kept there.
  uint64_t ResidentBytes = 0;
  PhaseTimes Phases;

  LaunchStats &operator+=(const LaunchStats &O);
};

// What a session's connection runs over ("auto", "tcp", "unix", "local"
// in options and output, transportName()). Auto is only asked for
// (SessionOptions::Transport), never reported; SocketFile is only
// reported (asking for Tcp keeps a unix: address's connection).
//   Tcp: a TCP connection to the address given, to any machine.
//   SocketFile: the socket file of a unix:PATH address, which ssh may
//        relay from anywhere.
//   Local: an executor on this machine, reached through its local Unix
//        socket. Zero-copy launches move their payloads through memory
//        both processes map, with one copy on the host each way; the
//        other strategies use the socket alone.
enum class TransportKind { Auto, Tcp, SocketFile, Local };

// Bytes a session's connection carried each way so far, framing included,
// counted as they move (a launch's large message, part way through).
struct Traffic {
  uint64_t Sent = 0;
  uint64_t Received = 0;
};

// What a session's residents (Resident.h) moved and what its executor
// holds for it; the bytes they spared launches are LaunchStats's
// ResidentBytes.
struct ResidentStats {
  uint64_t Uploads = 0;
  uint64_t UploadedBytes = 0; // the tensors' values, dense
  uint64_t Fetches = 0;
  uint64_t FetchedBytes = 0;
  uint64_t Releases = 0;
  uint64_t KeptOutputs = 0; // outputs launches kept in the executor
  uint64_t Held = 0;        // residents the executor holds for the session now
  uint64_t HeldBytes = 0;
};

struct SessionStats {
  TransportKind Transport = TransportKind::Tcp;
  uint64_t Launches = 0;
  LaunchStats Last;
  LaunchStats Total;
  ResidentStats Residents;
};

} // namespace catalyst::remote

#endif
