//===- Sockets.cpp - What the kernel says about test sockets --------------===//

#include "Sockets.h"

#include <arpa/inet.h>
#include <cstdlib>
#include <dirent.h>
#include <gtest/gtest.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
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

LoopbackSocket::LoopbackSocket(bool Listen, uint16_t Wanted) {
  Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int On = 1;
  // A port just given up may still have connections in TIME_WAIT.
  if (Wanted) {
    EXPECT_EQ(::setsockopt(Fd, SOL_SOCKET, SO_REUSEADDR, &On, sizeof(On)), 0);
  }
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_port = htons(Wanted);
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

ConnectionCounter::ConnectionCounter(uint16_t Port)
    : Listener(/*Listen=*/true, Port), Acceptor([this] { acceptLoop(); }) {}

ConnectionCounter::~ConnectionCounter() {
  Stop = true;
  Acceptor.join();
}

void ConnectionCounter::acceptLoop() {
  while (!Stop) {
    pollfd P{Listener.fd(), POLLIN, 0};
    if (::poll(&P, 1, 20) != 1)
      continue;
    int C = ::accept4(Listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (C < 0)
      continue;
    // Taken before the close: the peer's next attempt comes after it.
    auto Now = std::chrono::steady_clock::now();
    ::close(C);
    std::lock_guard<std::mutex> L(M);
    Times.push_back(Now);
    Changed.notify_all();
  }
}

std::vector<std::chrono::steady_clock::time_point> ConnectionCounter::accepted() const {
  std::lock_guard<std::mutex> L(M);
  return Times;
}

bool ConnectionCounter::waitFor(size_t N, std::chrono::steady_clock::duration Deadline) const {
  std::unique_lock<std::mutex> L(M);
  return Changed.wait_for(L, Deadline, [&] { return Times.size() >= N; });
}

} // namespace catalyst::remote::test
