//===- NetUtil.h - Sockets and clocks for tools and harnesses ---*- C++ -*-===//
//
// Small helpers shared by the network-path tools and the benchmark's raw
// TCP peer: parsing "HOST:PORT", listening, connecting, blocking
// whole-buffer I/O and a monotonic clock. Plain POSIX, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TOOLS_NETUTIL_H
#define CATALYST_REMOTE_TOOLS_NETUTIL_H

#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace catalyst::remote::tools {

inline int64_t nowNs() {
  timespec T;
  ::clock_gettime(CLOCK_MONOTONIC, &T);
  return int64_t(T.tv_sec) * 1000000000 + T.tv_nsec;
}

struct SocketAddress {
  sockaddr_storage Storage{};
  socklen_t Length = 0;

  const sockaddr *get() const { return reinterpret_cast<const sockaddr *>(&Storage); }
  sockaddr *get() { return reinterpret_cast<sockaddr *>(&Storage); }
  int family() const { return Storage.ss_family; }
};

inline std::string formatAddress(const SocketAddress &A) {
  char Host[NI_MAXHOST], Port[NI_MAXSERV];
  if (::getnameinfo(A.get(), A.Length, Host, sizeof(Host), Port, sizeof(Port),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  bool V6 = A.family() == AF_INET6;
  return (V6 ? "[" : "") + std::string(Host) + (V6 ? "]:" : ":") + Port;
}

// "HOST:PORT", "[V6]:PORT" or a bare "PORT" (127.0.0.1). Names are resolved;
// the first address wins. Returns false with a reason in Error.
inline bool parseAddress(const std::string &Spec, SocketAddress &Out, std::string &Error) {
  std::string Host = "127.0.0.1", Port = Spec;
  size_t Colon = Spec.rfind(':');
  if (Colon != std::string::npos) {
    Host = Spec.substr(0, Colon);
    Port = Spec.substr(Colon + 1);
    if (Host.size() >= 2 && Host.front() == '[' && Host.back() == ']')
      Host = Host.substr(1, Host.size() - 2);
  }
  if (Port.empty() || Port.find_first_not_of("0123456789") != std::string::npos) {
    Error = "bad address '" + Spec + "' (want HOST:PORT)";
    return false;
  }
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  Hints.ai_flags = AI_NUMERICSERV;
  addrinfo *List = nullptr;
  int Rc = ::getaddrinfo(Host.c_str(), Port.c_str(), &Hints, &List);
  if (Rc != 0 || !List) {
    Error = "cannot resolve '" + Spec + "': " + ::gai_strerror(Rc);
    return false;
  }
  std::memcpy(&Out.Storage, List->ai_addr, List->ai_addrlen);
  Out.Length = List->ai_addrlen;
  ::freeaddrinfo(List);
  return true;
}

inline std::string errnoText(const char *What) {
  return std::string(What) + ": " + std::strerror(errno);
}

inline void setNoDelay(int Fd) {
  int One = 1;
  // Latency only: a socket that refuses it still carries every byte.
  ::setsockopt(Fd, IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One));
}

// A listening socket (SO_REUSEADDR, with Flags such as SOCK_NONBLOCK), or -1.
inline int listenOn(const SocketAddress &A, int Flags, std::string &Error) {
  int Fd = ::socket(A.family(), SOCK_STREAM | SOCK_CLOEXEC | Flags, 0);
  if (Fd < 0) {
    Error = errnoText("socket");
    return -1;
  }
  int One = 1;
  // Without it a port still in TIME_WAIT fails the bind, which says so.
  ::setsockopt(Fd, SOL_SOCKET, SO_REUSEADDR, &One, sizeof(One));
  setNoDelay(Fd);
  if (::bind(Fd, A.get(), A.Length) != 0 || ::listen(Fd, 128) != 0) {
    Error = "cannot listen on " + formatAddress(A) + ": " + std::strerror(errno);
    ::close(Fd);
    return -1;
  }
  return Fd;
}

inline SocketAddress localAddress(int Fd) {
  SocketAddress A;
  A.Length = sizeof(A.Storage);
  ::getsockname(Fd, A.get(), &A.Length);
  return A;
}

// Writes all of Buf; false on an error (errno set).
inline bool writeAll(int Fd, const void *Buf, size_t Len) {
  const char *P = static_cast<const char *>(Buf);
  while (Len > 0) {
    ssize_t N = ::send(Fd, P, Len, MSG_NOSIGNAL);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    P += N;
    Len -= size_t(N);
  }
  return true;
}

// Reads exactly Len bytes; false on an error or an early end of stream
// (errno is 0 for the latter).
inline bool readAll(int Fd, void *Buf, size_t Len) {
  char *P = static_cast<char *>(Buf);
  while (Len > 0) {
    ssize_t N = ::recv(Fd, P, Len, 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N == 0)
      errno = 0;
    if (N <= 0)
      return false;
    P += N;
    Len -= size_t(N);
  }
  return true;
}

} // namespace catalyst::remote::tools

#endif // CATALYST_REMOTE_TOOLS_NETUTIL_H
