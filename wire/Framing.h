//===- Framing.h - What one message looks like on the wire ------*- C++ -*-===//
//
// Both ends of a session speak ORC's SimpleRemoteEPC framing: a 32-byte
// little-endian header (message size, header included; opcode; sequence
// number; tag address), then the argument bytes. This file holds the
// header's encoding and this project's own opcodes on top of ORC's; the
// transport (SocketTransport.h) moves the frames.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_FRAMING_H
#define CATALYST_REMOTE_WIRE_FRAMING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/ExecutionEngine/Orc/Shared/SimpleRemoteEPCUtils.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace catalyst::remote::wire {

inline constexpr size_t FrameHeaderSize = 32;

// Writes a header to H (FrameHeaderSize bytes).
void encodeHeader(char *H, uint64_t MsgSize, llvm::orc::SimpleRemoteEPCOpcode OpC, uint64_t SeqNo,
                  llvm::orc::ExecutorAddr TagAddr);

struct FrameHeader {
  uint64_t Size = 0, OpC = 0, SeqNo = 0, Tag = 0;
};
FrameHeader decodeHeader(const char *H);

// This project's extension to the framing: a message whose payload travels
// out of line. Same 32-byte header, with the plan's size where ORC puts the
// tag address; then the plan (small, decoded by the receiver's handler);
// then the payload, which the transport moves straight between memory and
// the socket. Only sent to a peer that advertised the extension.
//
// Over a local socket (an executor on the host's machine) payloads need not
// travel at all: a SharedLaunch's inputs are already in a slab both
// processes map, and a SharedResult says where in shared memory its outputs
// are; both carry a plan and no payload. A SharedSlab message passes the
// host such a slab: its plan says what it is, and the memfd comes with it
// (SCM_RIGHTS). Once the session's shared mailbox is open (Mailbox.h),
// SharedLaunch and SharedResult messages go through it instead of the
// socket, which then carries at most a doorbell for a peer asleep on it.
enum class PayloadOpcode : uint64_t {
  Launch = 0x40,
  LaunchResult = 0x41,
  SharedLaunch = 0x43,
  SharedResult = 0x44,
  SharedSlab = 0x45,
  // Residents (Residents.h): host to executor, each answered by a
  // ResidentReply.
  Upload = 0x47,
  Fetch = 0x48,
  Release = 0x49,
  ResidentReply = 0x4a,
};

// Also this project's own: a header alone, which an executor sends while it
// works on a request for long (a kernel that runs for minutes), to a host
// that asked for them, so that the host can tell a busy executor from one
// that stopped answering. The receiving transport consumes it.
inline constexpr uint64_t HeartbeatOpcode = 0x42;

// Also this project's own, a header alone: a message waits in the shared
// mailbox (Mailbox.h) for a peer that said it sleeps on the socket.
inline constexpr uint64_t DoorbellOpcode = 0x46;

inline bool isPayloadOpcode(uint64_t OpC) {
  return OpC == uint64_t(PayloadOpcode::Launch) || OpC == uint64_t(PayloadOpcode::LaunchResult) ||
         (OpC >= uint64_t(PayloadOpcode::SharedLaunch) &&
          OpC <= uint64_t(PayloadOpcode::SharedSlab)) ||
         (OpC >= uint64_t(PayloadOpcode::Upload) && OpC <= uint64_t(PayloadOpcode::ResidentReply));
}

// What may travel through the shared mailbox instead of the socket.
inline bool isMailOpcode(uint64_t OpC) {
  return OpC == uint64_t(PayloadOpcode::SharedLaunch) ||
         OpC == uint64_t(PayloadOpcode::SharedResult);
}

// A request: the sender waits for its result (a round trip).
inline bool isLaunchOpcode(PayloadOpcode OpC) {
  return OpC == PayloadOpcode::Launch || OpC == PayloadOpcode::SharedLaunch;
}

// A request about residents (Residents.h), answered by a ResidentReply.
inline bool isResidentOpcode(PayloadOpcode OpC) {
  return OpC == PayloadOpcode::Upload || OpC == PayloadOpcode::Fetch ||
         OpC == PayloadOpcode::Release;
}

// Encodes a complete Hangup frame carrying Message, ready to be written to the
// socket as is (the executor prepares these before a kernel can crash).
std::string encodeHangupFrame(llvm::StringRef Message);

} // namespace catalyst::remote::wire

#endif
