//===- WireCounters.h - What a transport counted, around one call -*- C++ -*-===//
//
// The transport's counters, read before and after a call to charge it
// with what it sent and received:
//
//   auto Before = WireCounters::of(T);
//   ... one launch or resident request ...
//   WireCounters::of(T).addDelta(Before, Stats);
//
// Thread safety: reads the transport's atomic counters; a session reads
// them in its launch turn, so no other call of its adds to them meanwhile.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_WIRECOUNTERS_H
#define CATALYST_REMOTE_SESSION_WIRECOUNTERS_H

#include "catalyst/remote/Stats.h"
#include "wire/SocketTransport.h"

namespace catalyst::remote {

struct WireCounters {
  uint64_t Requests, Sent, Received, BytesOut, BytesIn;

  static WireCounters of(const wire::SocketTransport &T) {
    return {T.requestsSent(), T.messagesSent(), T.messagesReceived(), T.bytesSent(),
            T.bytesReceived()};
  }
  void addDelta(const WireCounters &Before, LaunchStats &S) const {
    S.RoundTrips += Requests - Before.Requests;
    S.Messages += Sent - Before.Sent + Received - Before.Received;
    S.BytesSent += BytesOut - Before.BytesOut;
    S.BytesReceived += BytesIn - Before.BytesIn;
  }
};

} // namespace catalyst::remote

#endif
