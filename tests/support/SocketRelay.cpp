//===- SocketRelay.cpp - A TCP port forwarded to a socket file ------------===//

#include "SocketRelay.h"

#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace catalyst::remote::test {

namespace {

// From's bytes to To until From ends (then To's sending side ends too) or
// either fails.
void pump(int From, int To) {
  char Buf[1 << 16];
  for (;;) {
    ssize_t N = ::recv(From, Buf, sizeof(Buf), 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      break;
    for (ssize_t Done = 0; Done < N;) {
      ssize_t W = ::send(To, Buf + Done, size_t(N - Done), MSG_NOSIGNAL);
      if (W < 0 && errno == EINTR)
        continue;
      if (W <= 0) {
        ::shutdown(From, SHUT_RD);
        return;
      }
      Done += W;
    }
  }
  ::shutdown(To, SHUT_WR);
}

int connectToFile(const std::string &Path) {
  sockaddr_un A{};
  A.sun_family = AF_UNIX;
  std::strncpy(A.sun_path, Path.c_str(), sizeof(A.sun_path) - 1);
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd >= 0 && ::connect(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)) != 0) {
    ::close(Fd);
    return -1;
  }
  return Fd;
}

} // namespace

SocketRelay::SocketRelay(std::string P) : Path(std::move(P)) {
  EXPECT_EQ(::pipe2(StopFds, O_CLOEXEC), 0);
  Acceptor = std::thread([this] { acceptLoop(); });
}

SocketRelay::~SocketRelay() {
  [[maybe_unused]] ssize_t N = ::write(StopFds[1], "x", 1);
  Acceptor.join();
  std::lock_guard<std::mutex> Lock(Mutex);
  for (int Fd : Fds)
    ::shutdown(Fd, SHUT_RDWR);
  for (auto &T : Pumps)
    T.join();
  for (int Fd : Fds)
    ::close(Fd);
  ::close(StopFds[0]);
  ::close(StopFds[1]);
}

void SocketRelay::acceptLoop() {
  for (;;) {
    pollfd P[2] = {{Listener.fd(), POLLIN, 0}, {StopFds[0], POLLIN, 0}};
    if (::poll(P, 2, -1) < 0 && errno != EINTR)
      return;
    if (P[1].revents)
      return;
    if (P[0].revents & POLLIN)
      if (int Accepted = ::accept4(Listener.fd(), nullptr, nullptr, SOCK_CLOEXEC); Accepted >= 0)
        relay(Accepted);
  }
}

// A connection the socket file refuses is cut at once, as ssh cuts it.
void SocketRelay::relay(int Accepted) {
  int Target = connectToFile(Path);
  std::lock_guard<std::mutex> Lock(Mutex);
  Fds.push_back(Accepted);
  if (Target < 0) {
    ::shutdown(Accepted, SHUT_RDWR);
    return;
  }
  Fds.push_back(Target);
  ++Count;
  Pumps.emplace_back(pump, Accepted, Target);
  Pumps.emplace_back(pump, Target, Accepted);
}

} // namespace catalyst::remote::test
