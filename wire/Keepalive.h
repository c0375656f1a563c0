//===- Keepalive.h - Noticing a peer that vanished while idle ---*- C++ -*-===//
//
// Liveness covers a connection while a reply is due. An idle connection
// whose peer vanished without a reset (a machine powered off, a cable cut)
// is found by TCP keepalive instead: probes after 30 s of silence, every
// 10 s, and the connection ends after 3 unanswered, about a minute in all.
// Both ends set it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_KEEPALIVE_H
#define CATALYST_REMOTE_WIRE_KEEPALIVE_H

#include "llvm/Support/Error.h"

namespace catalyst::remote::wire {

// Fails naming the option the socket refused (a socket that is not TCP
// refuses them); the socket still works then, unwatched.
llvm::Error enableKeepalive(int Fd);

} // namespace catalyst::remote::wire

#endif
