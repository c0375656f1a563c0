//===- Sockets.cpp - What the kernel says about test sockets --------------===//

#include "Sockets.h"

#include <arpa/inet.h>
#include <cstdlib>
#include <dirent.h>
#include <gtest/gtest.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace catalyst::remote::test {

namespace {

// "a.b.c.d:port" of an IPv4 socket's peer, or "" for anything else.
std::string peerOf(int Fd) {
  sockaddr_in Peer{};
  socklen_t Len = sizeof(Peer);
  if (::getpeername(Fd, reinterpret_cast<sockaddr *>(&Peer), &Len) != 0 ||
      Peer.sin_family != AF_INET)
    return "";
  char Host[INET_ADDRSTRLEN];
  ::inet_ntop(AF_INET, &Peer.sin_addr, Host, sizeof(Host));
  return std::string(Host) + ":" + std::to_string(ntohs(Peer.sin_port));
}

} // namespace

uint64_t tcpBytesSentTo(const std::string &Address) {
  uint64_t Sent = 0;
  bool Found = false;
  DIR *Fds = ::opendir("/proc/self/fd");
  if (!Fds)
    return 0;
  while (dirent *E = ::readdir(Fds)) {
    int Fd = std::atoi(E->d_name);
    tcp_info Info{};
    socklen_t Len = sizeof(Info);
    if (E->d_name[0] == '.' || peerOf(Fd) != Address ||
        ::getsockopt(Fd, IPPROTO_TCP, TCP_INFO, &Info, &Len) != 0)
      continue;
    Sent += Info.tcpi_bytes_sent;
    Found = true;
  }
  ::closedir(Fds);
  EXPECT_TRUE(Found) << "no TCP connection to " << Address << " to count the bytes of";
  return Sent;
}

LoopbackSocket::LoopbackSocket(bool Listen) {
  Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(A);
  EXPECT_EQ(::bind(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0);
  EXPECT_EQ(::getsockname(Fd, reinterpret_cast<sockaddr *>(&A), &Len), 0);
  Port = ntohs(A.sin_port);
  if (Listen) {
    EXPECT_EQ(::listen(Fd, 4), 0);
  }
}

void LoopbackSocket::close() {
  if (Fd >= 0)
    ::close(Fd);
  Fd = -1;
}

} // namespace catalyst::remote::test
