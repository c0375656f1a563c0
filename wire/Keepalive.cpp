//===- Keepalive.cpp - Noticing a peer that vanished while idle -----------===//

#include "Keepalive.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace catalyst::remote::wire {

void enableKeepalive(int Fd) {
  int On = 1, Idle = 30, Interval = 10, Count = 3;
  ::setsockopt(Fd, SOL_SOCKET, SO_KEEPALIVE, &On, sizeof(On));
  ::setsockopt(Fd, IPPROTO_TCP, TCP_KEEPIDLE, &Idle, sizeof(Idle));
  ::setsockopt(Fd, IPPROTO_TCP, TCP_KEEPINTVL, &Interval, sizeof(Interval));
  ::setsockopt(Fd, IPPROTO_TCP, TCP_KEEPCNT, &Count, sizeof(Count));
}

} // namespace catalyst::remote::wire
