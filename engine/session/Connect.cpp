//===- Connect.cpp - Reaching an executor at its address ------------------===//

#include "Connect.h"

#include "catalyst/remote/Failure.h"
#include "wire/Keepalive.h"
#include "wire/SocketFile.h"
#include "wire/SysError.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote {

namespace {

using Clock = std::chrono::steady_clock;

// Unreachable by default: no executor answered there.
Error connectError(StringRef Address, const Twine &Why,
                   FailureKind Kind = FailureKind::Unreachable) {
  return makeFailure(Kind, "cannot connect to " + Address + ": " + Why);
}

Error notHostPort(StringRef Address) {
  return makeFailure(FailureKind::BadArgument, "address '" + Address + "' is not host:port");
}

// Non-blocking connect bounded by Deadline; returns 0 or an errno value.
// Local is set when what failed was this process's own socket, not the
// connect.
int connectBefore(int Fd, const addrinfo &A, Clock::time_point Deadline, bool &Local) {
  Local = true;
  int Flags = ::fcntl(Fd, F_GETFL);
  if (Flags < 0 || ::fcntl(Fd, F_SETFL, Flags | O_NONBLOCK) != 0)
    return errno;
  Local = false;
  int Err = 0;
  if (::connect(Fd, A.ai_addr, A.ai_addrlen) != 0)
    Err = errno;
  while (Err == EINPROGRESS || Err == EINTR) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    if (Left.count() <= 0)
      return ETIMEDOUT;
    pollfd P{Fd, POLLOUT, 0};
    int R = ::poll(&P, 1, static_cast<int>(Left.count()));
    if (R < 0 && errno != EINTR)
      return errno;
    if (R > 0) {
      socklen_t Len = sizeof(Err);
      if (::getsockopt(Fd, SOL_SOCKET, SO_ERROR, &Err, &Len) != 0)
        Err = errno;
      break;
    }
  }
  if (Err == 0 && ::fcntl(Fd, F_SETFL, Flags) != 0) {
    Local = true;
    Err = errno;
  }
  return Err;
}

} // namespace

Expected<HostPort> parseHostPort(StringRef Address) {
  HostPort HP;
  StringRef Rest;
  if (Address.consume_front("[")) {
    auto Close = Address.find(']');
    if (Close == StringRef::npos)
      return connectError(Address, "missing ']' after an IPv6 address", FailureKind::BadArgument);
    HP.Host = Address.take_front(Close).str();
    Rest = Address.drop_front(Close + 1);
  } else {
    auto Colon = Address.rfind(':');
    if (Colon == StringRef::npos)
      return notHostPort(Address);
    HP.Host = Address.take_front(Colon).str();
    Rest = Address.drop_front(Colon);
  }
  if (!Rest.consume_front(":") || Rest.empty() || HP.Host.empty())
    return notHostPort(Address);
  HP.Port = Rest.str();
  return HP;
}

Expected<int> connectTcp(StringRef Address, std::chrono::milliseconds Timeout) {
  auto HP = parseHostPort(Address);
  if (!HP)
    return HP.takeError();
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  addrinfo *List = nullptr;
  if (int Rc = ::getaddrinfo(HP->Host.c_str(), HP->Port.c_str(), &Hints, &List))
    return connectError(Address, ::gai_strerror(Rc));
  auto Deadline = Clock::now() + Timeout;
  int LastErr = ENOENT;
  // A socket this process could not make (out of descriptors) says
  // nothing of the executor.
  FailureKind Kind = FailureKind::Unreachable;
  int Fd = -1;
  const char *Step = "";
  for (addrinfo *A = List; A && Fd < 0; A = A->ai_next) {
    Step = "";
    Fd = ::socket(A->ai_family, A->ai_socktype | SOCK_CLOEXEC, A->ai_protocol);
    Kind = Fd < 0 ? FailureKind::Other : FailureKind::Unreachable;
    if (Fd < 0) {
      LastErr = errno;
      continue;
    }
    bool Local = false;
    if ((LastErr = connectBefore(Fd, *A, Deadline, Local)) != 0) {
      ::close(Fd); // never connected: nothing of it to lose
      Fd = -1;
    }
    if (Local) {
      Kind = FailureKind::Other;
      Step = "setting its socket's flags: ";
    }
  }
  ::freeaddrinfo(List);
  if (Fd < 0)
    return connectError(Address, Twine(Step) + std::strerror(LastErr), Kind);
  int One = 1;
  Error Err = ::setsockopt(Fd, IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One)) == 0
                  ? wire::enableKeepalive(Fd)
                  : wire::sysError("setting TCP_NODELAY", errno);
  if (Err) {
    ::close(Fd); // nothing was sent on it
    return connectError(Address, toString(std::move(Err)), FailureKind::Other);
  }
  return Fd;
}

Expected<int> connectTo(StringRef Address, std::chrono::milliseconds Timeout) {
  if (auto Path = wire::socketFilePath(Address))
    return wire::connectToPath(*Path, Clock::now() + Timeout);
  return connectTcp(Address, Timeout);
}

} // namespace catalyst::remote
