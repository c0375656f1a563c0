//===- SocketTransportLiveness.cpp - Telling a live peer from a gone one ----===//
//
// Reply timeouts (a read that waits too long while a reply is due, a send
// that moves nothing), heartbeats, and the errors that say which: the
// peer stopped answering, a send failed part way, or TLS found the
// stream altered.
//
//===----------------------------------------------------------------------===//

#include "SocketTransport.h"
#include "SysError.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/uio.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

bool SocketTransport::timedOut(int Errno) {
  return Errno == EAGAIN || Errno == EWOULDBLOCK;
}

// A read timed out: the peer said nothing for the liveness timeout. It is
// alive still if it took bytes of ours meanwhile, a long request on its way
// (the reply is due from when the request started). Seen is the bytes
// sent when the reader last looked.
bool SocketTransport::peerTookBytes(uint64_t &Seen) const {
  uint64_t Now = MovedOut.load(std::memory_order_relaxed);
  bool Took = Now != Seen;
  Seen = Now;
  return Took;
}

// SO_RCVTIMEO ends a blocking read with EAGAIN: the peer said nothing, nor
// took anything of ours, for the whole reply timeout. The reader ends the
// connection on any error; the reason is kept for whoever asks why
// (closeReason()).
Error SocketTransport::readFailed(const char *What, int Errno) {
  if (tlsFailedHere())
    return tlsFailed(What);
  if (!timedOut(Errno))
    return sysError(What, Errno);
  std::string Why = formatv("the executor stopped answering: nothing arrived for {0} ms while a "
                            "reply was due (the liveness timeout); this end closed the connection",
                            ReplyTimeoutMs.load())
                        .str();
  // A peer silent for so long is taken for gone (a cut link, a stopped
  // machine): the session's calls fail as for a lost executor.
  noteClosed(Why, FailureKind::ExecutorLost);
  return createStringError(std::error_code(ETIMEDOUT, std::generic_category()), Why);
}

Error SocketTransport::readHeartbeat(Head &H, uint64_t MsgSize) {
  if (!Opts.PeerSendsHeartbeats)
    return protocolError("the peer sent a heartbeat, which only an executor sends");
  if (MsgSize != HeaderSize)
    return createStringError(inconvertibleErrorCode(), "peer sent a heartbeat of %llu bytes",
                             (unsigned long long)MsgSize);
  if (!H.Consumed)
    if (auto Err = readExact(H.Bytes, HeaderSize, nullptr))
      return Err;
  ++FramesIn;
  Heartbeats.fetch_add(1, std::memory_order_relaxed);
  return Error::success();
}

void SocketTransport::setReplyTimeout(std::chrono::milliseconds Timeout) {
  ReplyTimeoutMs = Timeout.count();
  // Zero (no timeout) stays zero; a timeout too short to slice gets 1 us.
  auto Slice = std::chrono::duration_cast<std::chrono::microseconds>(Timeout) / SendSlices;
  auto Send = Timeout.count() > 0 ? std::max(Slice, std::chrono::microseconds(1))
                                  : std::chrono::microseconds(0);
  Stream.setTimeouts(Timeout, Send);
}

// A TLS record failed, or the peer ended TLS with an alert: name it, and
// tampering where that is what it means.
Error SocketTransport::tlsFailed(const char *What) {
  std::string Said = Stream.tls()->failureText();
  std::string Why;
  switch (Stream.tls()->failure()) {
  case TlsFailure::Tampered:
    Why = formatv("{0}: a TLS record from the peer failed authentication: its bytes were "
                  "altered or injected on the way (tampering), or they do not come from the "
                  "peer that authenticated; this end closed the connection ({1})",
                  What, Said)
              .str();
    break;
  case TlsFailure::TamperedThere:
    Why = formatv("{0}: the peer ended TLS with an alert saying that what reached it was not "
                  "this end's records: bytes were altered or injected on the way (tampering) "
                  "({1})",
                  What, Said)
              .str();
    break;
  case TlsFailure::PeerAlert:
    Why = formatv("{0}: the peer ended TLS with an alert ({1})", What, Said).str();
    break;
  default:
    Why = formatv("{0}: TLS failed: {1}", What, Said).str();
    break;
  }
  // Not the executor's going: someone altered the stream, or TLS itself
  // failed, and a program has nothing better to act on than the message.
  noteClosed(Why, FailureKind::Other);
  return createStringError(std::error_code(EBADMSG, std::generic_category()), Why);
}

// A frame that is a header alone (a heartbeat, a doorbell), under SendMutex.
Error SocketTransport::sendBareFrame(uint64_t OpC, const char *What) {
  char Header[HeaderSize];
  encodeHeader(Header, HeaderSize, static_cast<SimpleRemoteEPCOpcode>(OpC), 0, ExecutorAddr());
  iovec Iov{Header, HeaderSize};
  if (!beginSend(HeaderSize))
    return goingDown();
  uint64_t Written = 0;
  int Err = sendAll(&Iov, 1, Written);
  endSend(Written);
  return Err ? lostWhileSending(What, Err, Written, HeaderSize) : Error::success();
}

Error SocketTransport::sendHeartbeat() {
  sync::MutexLock Lock(SendMutex);
  if (Disconnected)
    return createStringError(inconvertibleErrorCode(), "connection already closed");
  if (auto Err = sendBareFrame(HeartbeatOpcode, "sending a heartbeat"))
    return Err;
  ++FramesOut;
  Heartbeats.fetch_add(1, std::memory_order_relaxed);
  return Error::success();
}

// The peer announced a message too large to take. Tell it why before going,
// and take in (and drop) what it is still sending for a while: closing with
// unread data would reset the connection and lose the explanation.
// A peer that reset or closed the connection is gone for good, and after
// part of a message the peer would read whatever comes next as its rest: in
// both cases end the connection and say so to everyone who asks
// (disconnected(), closeReason()), not only to this sender. A send that
// failed before its first byte leaves the stream framed and the session up.
Error SocketTransport::lostWhileSending(const char *What, int Errno, uint64_t Written,
                                        uint64_t MsgSize) {
  if (tlsFailedHere()) {
    Error Err = tlsFailed(What);
    disconnect();
    return Err;
  }
  if (Written == 0 && Errno != EPIPE && Errno != ECONNRESET && Errno != ETIMEDOUT)
    return sysError(What, Errno);
  if (Errno == EPIPE || Errno == ECONNRESET)
    peekHangup();
  std::string Why =
      Errno == ETIMEDOUT
          ? formatv("the executor stopped answering: it took none of the bytes of a message "
                    "({0}, {1} of {2} bytes sent) and sent nothing for {3} ms (the liveness "
                    "timeout); this end closed the connection",
                    What, Written, MsgSize, ReplyTimeoutMs.load())
                .str()
          : formatv("{0} failed after {1} of its {2} bytes: {3}; this end closed the connection",
                    What, Written, MsgSize, std::strerror(Errno))
                .str();
  noteClosed(Why, FailureKind::ExecutorLost);
  disconnect();
  return createStringError(std::error_code(Errno, std::generic_category()), Why);
}

} // namespace catalyst::remote::wire
