//===- SendMark.cpp - Whether a stream ended between messages -------------===//

#include "SendMark.h"

#include "UnixSocket.h"

#include <cstddef>

// The kernel's own header: glibc's tcp_info stops before tcpi_bytes_acked.
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

namespace catalyst::remote::wire {

namespace {

std::optional<uint64_t> bytesAcked(int Fd) {
  tcp_info Info{};
  socklen_t Len = sizeof(Info);
  if (::getsockopt(Fd, IPPROTO_TCP, TCP_INFO, &Info, &Len) != 0 ||
      Len < offsetof(tcp_info, tcpi_bytes_acked) + sizeof(Info.tcpi_bytes_acked))
    return std::nullopt;
  return Info.tcpi_bytes_acked;
}

} // namespace

// Written = acknowledged + still queued (SIOCOUTQ: written, not yet
// acknowledged). An acknowledgement landing between the two reads would
// move bytes from one to the other: read until the acknowledged count
// holds still around the queue's.
std::optional<uint64_t> streamWritten(int Fd) {
  for (int Try = 0; Try < 16; ++Try) {
    auto Before = bytesAcked(Fd);
    int Queued = 0;
    if (!Before || ::ioctl(Fd, SIOCOUTQ, &Queued) != 0 || Queued < 0)
      return std::nullopt;
    auto After = bytesAcked(Fd);
    if (After && *After == *Before)
      return *Before + uint64_t(Queued);
  }
  return std::nullopt;
}

uint64_t startCounting(int Fd, SendMark &Mark) {
  if (auto Written = streamWritten(Fd))
    return *Written;
  if (!isUnixSocket(Fd))
    return SendMark::Never;
  Mark.Counted.store(0, std::memory_order_release);
  return 0;
}

bool endsBetweenMessages(int Fd, const SendMark &Mark) {
  if (Mark.Sealed.load(std::memory_order_acquire))
    return false;
  if (!Mark.Busy.load(std::memory_order_acquire))
    return true;
  uint64_t Until = Mark.Until.load(std::memory_order_acquire);
  uint64_t Counted = Mark.Counted.load(std::memory_order_acquire);
  auto Written = Counted != SendMark::Never ? std::optional<uint64_t>(Counted) : streamWritten(Fd);
  return Until != SendMark::Never && Written && *Written == Until;
}

} // namespace catalyst::remote::wire
