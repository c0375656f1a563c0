//===- FakeExecutor.cpp - A peer that plays the executor ------------------===//

#include "FakeExecutor.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace catalyst::remote::test {

FakeExecutor::FakeExecutor(std::function<void(int Fd)> Play) {
  Listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(A);
  if (::bind(Listen, reinterpret_cast<sockaddr *>(&A), Len) != 0 || ::listen(Listen, 4) != 0 ||
      ::getsockname(Listen, reinterpret_cast<sockaddr *>(&A), &Len) != 0)
    ADD_FAILURE() << "cannot listen on loopback";
  Address = "127.0.0.1:" + std::to_string(ntohs(A.sin_port));
  Server = std::thread([this, Play] {
    int Fd = ::accept4(Listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (Fd < 0)
      return;
    Play(Fd);
    ::close(Fd);
  });
}

FakeExecutor::~FakeExecutor() {
  ::shutdown(Listen, SHUT_RDWR);
  Server.join();
  ::close(Listen);
}

bool closedByPeer(int Fd) {
  char Sink[4096];
  for (;;) {
    pollfd P{Fd, POLLIN, 0};
    if (::poll(&P, 1, 5000) <= 0)
      return false;
    ssize_t N = ::read(Fd, Sink, sizeof(Sink));
    if (N <= 0)
      return true;
  }
}

} // namespace catalyst::remote::test
