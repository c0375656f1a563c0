//===- TamperRelay.cpp - A man in the middle for one TCP connection -------===//

#include "TamperRelay.h"

#include "NetUtil.h"

#include <cerrno>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace catalyst::remote::test {

namespace {

// A connection to Address ("HOST:PORT"); -1 when it cannot be made.
int connectTo(const std::string &Address) {
  tools::SocketAddress A;
  std::string Error;
  if (!tools::parseAddress(Address, A, Error))
    return -1;
  int Fd = ::socket(A.Storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd >= 0 && ::connect(Fd, A.get(), A.Length) != 0) {
    ::close(Fd);
    return -1;
  }
  return Fd;
}

} // namespace

TamperRelay::TamperRelay(std::string T) : Target(std::move(T)) {
  Thread = std::thread([this] { run(); });
}

TamperRelay::~TamperRelay() {
  Stopping = true;
  ::shutdown(Listener.fd(), SHUT_RDWR);
  Thread.join();
}

void TamperRelay::flipNext(Direction W) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Armed = true;
  Way = W;
  Injected.clear();
  OverwriteAt = SIZE_MAX;
}

void TamperRelay::injectNext(Direction W, std::vector<char> Bytes) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Armed = true;
  Way = W;
  Injected = std::move(Bytes);
}

void TamperRelay::overwriteNext(Direction W, size_t At, char Value) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Armed = true;
  Way = W;
  Injected.clear();
  OverwriteAt = At;
  OverwriteWith = Value;
}

// Accepts one connection and pumps both ways until both ends are done.
void TamperRelay::run() {
  pollfd P{Listener.fd(), POLLIN, 0};
  while (!Stopping && ::poll(&P, 1, 100) == 0) {
  }
  if (Stopping)
    return;
  int Accepted = ::accept4(Listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
  if (Accepted < 0)
    return;
  int Fd = connectTo(Target);
  if (Fd < 0) {
    ::close(Accepted); // the host sees its connection cut
    return;
  }
  std::thread Back([&] { pump(Fd, Accepted, Direction::ToHost); });
  pump(Accepted, Fd, Direction::ToExecutor);
  Back.join();
  ::close(Accepted);
  ::close(Fd);
}

void TamperRelay::pump(int From, int To, Direction Mine) {
  char Buf[1 << 16];
  for (;;) {
    ssize_t N = ::recv(From, Buf, sizeof(Buf), 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      break;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (Armed && Way == Mine) {
        Armed = false;
        // Before any tampered byte leaves: a test that sees its effect
        // then finds tampered() true.
        Done = true;
        if (OverwriteAt != SIZE_MAX && size_t(N) > OverwriteAt)
          Buf[OverwriteAt] = OverwriteWith;
        else if (Injected.empty())
          Buf[N / 2] ^= 0x10;
        else if (!tools::writeAll(To, Injected.data(), Injected.size()))
          break;
      }
    }
    if (!tools::writeAll(To, Buf, size_t(N)))
      break;
  }
  ::shutdown(To, SHUT_WR);
  ::shutdown(From, SHUT_RD);
}

} // namespace catalyst::remote::test
