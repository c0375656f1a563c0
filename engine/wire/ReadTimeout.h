//===- ReadTimeout.h - Bounding blocking reads on a socket ------*- C++ -*-===//
//
// SO_RCVTIMEO ends a blocking read that waited the whole timeout with
// EAGAIN. Every bounded wait for a peer's bytes (the handshake, a session's
// setup, a reply under liveness) sets it through here.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_READTIMEOUT_H
#define CATALYST_REMOTE_WIRE_READTIMEOUT_H

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

} // namespace catalyst::remote::wire

#endif
