//===- RawPeer.cpp - The raw TCP link, for comparison ---------------------===//

#include "RawPeer.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
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

// "host:port" or "[v6]:port" into its two parts.
Expected<std::pair<std::string, std::string>> splitHostPort(const std::string &HostPort) {
  size_t Colon = HostPort.rfind(':');
  if (Colon == std::string::npos || Colon == 0 || Colon + 1 == HostPort.size())
    return createStringError(inconvertibleErrorCode(), "'%s' is not HOST:PORT", HostPort.c_str());
  std::string Host = HostPort.substr(0, Colon);
  if (Host.size() > 2 && Host.front() == '[' && Host.back() == ']')
    Host = Host.substr(1, Host.size() - 2);
  return std::make_pair(Host, HostPort.substr(Colon + 1));
}

// The first address HostPort resolves to; Passive for one to listen on.
Expected<std::pair<sockaddr_storage, socklen_t>> resolve(const std::string &HostPort,
                                                         bool Passive) {
  auto Parts = splitHostPort(HostPort);
  if (!Parts)
    return Parts.takeError();
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  Hints.ai_flags = Passive ? AI_PASSIVE : 0;
  addrinfo *Found = nullptr;
  int Rc = ::getaddrinfo(Parts->first.c_str(), Parts->second.c_str(), &Hints, &Found);
  if (Rc != 0)
    return createStringError(inconvertibleErrorCode(), "cannot resolve '%s': %s", HostPort.c_str(),
                             gai_strerror(Rc));
  sockaddr_storage Addr{};
  std::memcpy(&Addr, Found->ai_addr, Found->ai_addrlen);
  socklen_t Len = Found->ai_addrlen;
  ::freeaddrinfo(Found);
  return std::make_pair(Addr, Len);
}

std::string numericAddress(const sockaddr_storage &Addr, socklen_t Len) {
  char Host[NI_MAXHOST], Port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<const sockaddr *>(&Addr), Len, Host, sizeof(Host), Port,
                    sizeof(Port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  bool V6 = Addr.ss_family == AF_INET6;
  return (V6 ? "[" : "") + std::string(Host) + (V6 ? "]:" : ":") + Port;
}

// Binds Addr (port 0: any) and listens; Addr becomes the bound address.
// SO_REUSEADDR lets a standalone peer restart on its port at once.
Expected<int> listenOn(sockaddr_storage &Addr, socklen_t &Len) {
  int Fd = ::socket(Addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return sysError("socket");
  int One = 1;
  ::setsockopt(Fd, SOL_SOCKET, SO_REUSEADDR, &One, sizeof(One));
  if (::bind(Fd, reinterpret_cast<sockaddr *>(&Addr), Len) != 0 || ::listen(Fd, 4) != 0 ||
      ::getsockname(Fd, reinterpret_cast<sockaddr *>(&Addr), &Len) != 0) {
    Error Err = sysError("listen on " + numericAddress(Addr, Len));
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

// Links one after another, each to its end; returns when accept fails.
void serveLinks(int Listener) {
  for (;;) {
    int Fd = ::accept4(Listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (Fd < 0 && errno == EINTR)
      continue;
    if (Fd < 0)
      return;
    noDelay(Fd);
    serveLink(Fd);
    ::close(Fd);
  }
}

[[noreturn]] void runPeer(int Listener, pid_t Parent) {
  // Ends with the benchmark, however the benchmark ends.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != Parent)
    ::_exit(0);
  serveLinks(Listener);
  ::_exit(1);
}

} // namespace

Expected<std::unique_ptr<RawPeer>> RawPeer::start() {
  sockaddr_storage Addr{};
  auto &In = reinterpret_cast<sockaddr_in &>(Addr);
  In.sin_family = AF_INET;
  In.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(sockaddr_in);
  auto Listener = listenOn(Addr, Len);
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
  return std::unique_ptr<RawPeer>(new RawPeer(Pid, Addr, Len));
}

Expected<std::unique_ptr<RawPeer>> RawPeer::attach(const std::string &HostPort) {
  auto Addr = resolve(HostPort, /*Passive=*/false);
  if (!Addr)
    return Addr.takeError();
  return std::unique_ptr<RawPeer>(new RawPeer(0, Addr->first, Addr->second));
}

RawPeer::~RawPeer() {
  if (Pid <= 0)
    return;
  ::kill(Pid, SIGKILL);
  ::waitpid(Pid, nullptr, 0);
}

std::string RawPeer::address() const {
  return numericAddress(Addr, AddrLen);
}

Expected<std::unique_ptr<RawLink>> RawPeer::connect(uint64_t Request, uint64_t Reply) {
  int Fd = ::socket(Addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return sysError("socket");
  std::unique_ptr<RawLink> L(new RawLink(Fd, Request, Reply));
  if (::connect(Fd, reinterpret_cast<const sockaddr *>(&Addr), AddrLen) != 0)
    return sysError("connect to the raw TCP peer at " + address());
  noDelay(Fd);
  uint64_t Sizes[2] = {Request, Reply};
  if (!sendAll(Fd, reinterpret_cast<const char *>(Sizes), sizeof(Sizes)))
    return sysError("send sizes to the raw TCP peer");
  return L;
}

int serveRawPeer(const std::string &HostPort) {
  auto Addr = resolve(HostPort, /*Passive=*/true);
  if (!Addr) {
    errs() << "catalyst-remote-bench: " << toString(Addr.takeError()) << "\n";
    return 2;
  }
  auto Listener = listenOn(Addr->first, Addr->second);
  if (!Listener) {
    errs() << "catalyst-remote-bench: " << toString(Listener.takeError()) << "\n";
    return 1;
  }
  // Flushed at once: a harness waits for this line to learn the port.
  outs() << "catalyst-remote-bench: raw peer listening on "
         << numericAddress(Addr->first, Addr->second) << "\n";
  outs().flush();
  serveLinks(*Listener);
  errs() << "catalyst-remote-bench: raw peer: accept failed: " << std::strerror(errno) << "\n";
  return 1;
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
