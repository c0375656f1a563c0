//===- RawPeer.cpp - The raw loopback link, for comparison ----------------===//

#include "RawPeer.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

Error sysError(const Twine &What) {
  int E = errno;
  return createStringError(std::error_code(E, std::generic_category()),
                           What + ": " + std::strerror(E));
}

// Blocking, whole-buffer transfers; false on error or end of stream.
bool receiveAll(int Fd, char *Buf, uint64_t Bytes) {
  while (Bytes > 0) {
    ssize_t N = ::recv(Fd, Buf, Bytes, 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Buf += N;
    Bytes -= uint64_t(N);
  }
  return true;
}

// MSG_NOSIGNAL: a peer that died must fail the benchmark, not kill it.
bool sendAll(int Fd, const char *Buf, uint64_t Bytes) {
  while (Bytes > 0) {
    ssize_t N = ::send(Fd, Buf, Bytes, MSG_NOSIGNAL);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Buf += N;
    Bytes -= uint64_t(N);
  }
  return true;
}

// Small messages must not wait for Nagle, as the session's socket doesn't.
void noDelay(int Fd) {
  int One = 1;
  ::setsockopt(Fd, IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One));
}

Expected<int> listenLoopback(sockaddr_in &Addr) {
  int Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return sysError("socket");
  Addr = {};
  Addr.sin_family = AF_INET;
  Addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(Addr);
  if (::bind(Fd, reinterpret_cast<sockaddr *>(&Addr), sizeof(Addr)) != 0 || ::listen(Fd, 4) != 0 ||
      ::getsockname(Fd, reinterpret_cast<sockaddr *>(&Addr), &Len) != 0) {
    Error Err = sysError("listen on 127.0.0.1");
    ::close(Fd);
    return Err;
  }
  return Fd;
}

// One connection: the sizes first, then request in, reply out, until the
// benchmark hangs up. The buffer is touched before the first request so no
// page faults land in a timed exchange.
void serveLink(int Fd) {
  uint64_t Sizes[2];
  if (!receiveAll(Fd, reinterpret_cast<char *>(Sizes), sizeof(Sizes)))
    return;
  uint64_t Capacity = std::max<uint64_t>({Sizes[0], Sizes[1], 1});
  char *Buf = static_cast<char *>(std::malloc(Capacity));
  if (!Buf)
    return;
  std::memset(Buf, 0x5a, Capacity);
  while (receiveAll(Fd, Buf, Sizes[0]) && sendAll(Fd, Buf, Sizes[1])) {
  }
  std::free(Buf);
}

[[noreturn]] void runPeer(int Listener, pid_t Parent) {
  // Ends with the benchmark, however the benchmark ends.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != Parent)
    ::_exit(0);
  for (;;) {
    int Fd = ::accept4(Listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (Fd < 0 && errno == EINTR)
      continue;
    if (Fd < 0)
      ::_exit(1);
    noDelay(Fd);
    serveLink(Fd);
    ::close(Fd);
  }
}

} // namespace

Expected<std::unique_ptr<RawPeer>> RawPeer::start() {
  sockaddr_in Addr;
  auto Listener = listenLoopback(Addr);
  if (!Listener)
    return Listener.takeError();
  pid_t Parent = ::getpid();
  pid_t Pid = ::fork();
  if (Pid == 0)
    runPeer(*Listener, Parent);
  Error Err = Pid < 0 ? sysError("fork the raw TCP peer") : Error::success();
  ::close(*Listener);
  if (Err)
    return Err;
  return std::unique_ptr<RawPeer>(new RawPeer(Pid, Addr));
}

RawPeer::~RawPeer() {
  ::kill(Pid, SIGKILL);
  ::waitpid(Pid, nullptr, 0);
}

Expected<std::unique_ptr<RawLink>> RawPeer::connect(uint64_t Request, uint64_t Reply) {
  int Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return sysError("socket");
  std::unique_ptr<RawLink> L(new RawLink(Fd, Request, Reply));
  if (::connect(Fd, reinterpret_cast<const sockaddr *>(&Addr), sizeof(Addr)) != 0)
    return sysError("connect to the raw TCP peer");
  noDelay(Fd);
  uint64_t Sizes[2] = {Request, Reply};
  if (!sendAll(Fd, reinterpret_cast<const char *>(Sizes), sizeof(Sizes)))
    return sysError("send sizes to the raw TCP peer");
  return L;
}

RawLink::RawLink(int Fd, uint64_t Request, uint64_t Reply)
    : Fd(Fd), Request(Request), Reply(Reply), In(Reply, 0) {}

RawLink::~RawLink() {
  ::close(Fd);
}

Error RawLink::exchange(const char *Out, char *Into) {
  if (!sendAll(Fd, Out, Request))
    return sysError("raw TCP send");
  if (!receiveAll(Fd, Into ? Into : In.data(), Reply))
    return createStringError(inconvertibleErrorCode(), "raw TCP reply cut short");
  return Error::success();
}

} // namespace catalyst::remote::bench
