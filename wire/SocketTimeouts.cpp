//===- SocketTimeouts.cpp - Bounding blocking reads and sends -------------===//

#include "SocketTimeouts.h"

#include <algorithm>
#include <cstdint>
#include <sys/socket.h>
#include <sys/time.h>

namespace catalyst::remote::wire {

namespace {

// Not checked: a timeval made here is always valid, so setsockopt fails
// only on a descriptor that is no open socket, and the read or send it was
// to bound then fails at once with the same error.
void setTimeout(int Fd, int Option, std::chrono::microseconds Timeout) {
  int64_t Us = Timeout.count();
  timeval Tv{time_t(Us / 1000000), suseconds_t(Us % 1000000)};
  if (Us <= 0)
    Tv = timeval{0, 0};
  ::setsockopt(Fd, SOL_SOCKET, Option, &Tv, sizeof(Tv));
}

} // namespace

void setReadTimeout(int Fd, std::chrono::microseconds Timeout) {
  setTimeout(Fd, SO_RCVTIMEO, Timeout);
}

void setSendTimeout(int Fd, std::chrono::microseconds Timeout) {
  setTimeout(Fd, SO_SNDTIMEO, Timeout);
}

void setReadDeadline(int Fd, std::chrono::steady_clock::time_point By) {
  auto Left =
      std::chrono::duration_cast<std::chrono::microseconds>(By - std::chrono::steady_clock::now());
  setReadTimeout(Fd, std::max(Left, std::chrono::microseconds(1)));
}

} // namespace catalyst::remote::wire
