//===- SocketTimeouts.h - Bounding blocking reads and sends ------*- C++ -*-===//
//
// SO_RCVTIMEO ends a blocking read that waited the whole timeout with
// EAGAIN, SO_SNDTIMEO a blocking send that could queue nothing. Every
// bounded wait on a peer (the handshake, a session's setup, a reply or a
// send under liveness) sets them through here.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SOCKETTIMEOUTS_H
#define CATALYST_REMOTE_WIRE_SOCKETTIMEOUTS_H

#include <chrono>

namespace catalyst::remote::wire {

// Zero or less: reads wait for ever. A positive timeout below a microsecond
// is a microsecond (the kernel would take zero as none).
void setReadTimeout(int Fd, std::chrono::microseconds Timeout);

// Until By, or at least a microsecond if it has passed.
void setReadDeadline(int Fd, std::chrono::steady_clock::time_point By);

inline void clearReadTimeout(int Fd) {
  setReadTimeout(Fd, std::chrono::microseconds(0));
}

// As setReadTimeout, for sends.
void setSendTimeout(int Fd, std::chrono::microseconds Timeout);

} // namespace catalyst::remote::wire

#endif
