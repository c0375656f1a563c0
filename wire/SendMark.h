//===- SendMark.h - Whether a stream ended between messages -----*- C++ -*-===//
//
// A process that dies while sending leaves its peer a stream cut somewhere:
// maybe in the middle of a message (then nothing more may be written on it,
// or the peer reads it as the message's rest), maybe just after one whose
// last byte went out before its sender could say so. The sender keeps a
// SendMark where someone else can read it after its death (the executor's
// listener, in memory it shares with the connection process), and the
// kernel's count of bytes written tells the two apart. A Unix socket has no
// such count: its writer keeps its own in the mark, updated after each
// message; a process that dies between its last write and that update is
// taken to have died mid-message (its death goes unreported rather than
// reported into a stream that may be cut).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SENDMARK_H
#define CATALYST_REMOTE_WIRE_SENDMARK_H

#include <atomic>
#include <cstdint>
#include <optional>

namespace catalyst::remote::wire {

struct SendMark {
  // No Until can be reached: the stream was taken for good (a crash
  // report), or its byte count could not be read.
  static constexpr uint64_t Never = UINT64_MAX;

  // Set while a message is being written (and for good once claimed).
  std::atomic<bool> Busy{false};
  // The streamWritten() count once the message being written is all out.
  std::atomic<uint64_t> Until{Never};
  // The writer's own count of bytes written, on a stream the kernel does
  // not count for it (a Unix socket); Never on TCP.
  std::atomic<uint64_t> Counted{Never};
  // The stream carries TLS records (TlsStream.h) that only their writer
  // can make: nobody else may write on it, between messages or not.
  std::atomic<bool> Sealed{false};
};

// Where a writer's count starts when it takes the stream Fd with Mark: the
// kernel's count on TCP; on a Unix socket 0, and Mark counts from then on;
// Never when neither can say.
uint64_t startCounting(int Fd, SendMark &Mark);

// Bytes written so far to the connected TCP socket Fd, as its kernel counts
// them (acknowledged by the peer, plus still queued); nullopt when the
// socket cannot say (not TCP, or closed).
std::optional<uint64_t> streamWritten(int Fd);

// Whether Fd's stream ends on a message boundary, its writer gone: nothing
// was being written, or what was had gone out whole; never for a sealed
// stream, where a frame from anyone else would be read as tampering.
bool endsBetweenMessages(int Fd, const SendMark &Mark);

} // namespace catalyst::remote::wire

#endif
