//===- EchoServer.cpp - The raw loopback link, for comparison -------------===//

#include "EchoServer.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

Error sysError(const Twine &What) {
  int E = errno;
  return createStringError(std::error_code(E, std::generic_category()),
                           What + ": " + std::strerror(E));
}

bool readAll(int Fd, char *Buf, size_t Bytes) {
  while (Bytes > 0) {
    ssize_t N = read(Fd, Buf, Bytes);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Buf += N;
    Bytes -= size_t(N);
  }
  return true;
}

bool writeAll(int Fd, iovec *Iov, int Count) {
  while (Count > 0) {
    ssize_t N = writev(Fd, Iov, Count);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return false;
    size_t Left = size_t(N);
    for (; Count > 0 && Left >= Iov->iov_len; ++Iov, --Count)
      Left -= Iov->iov_len;
    if (Count > 0) {
      Iov->iov_base = static_cast<char *>(Iov->iov_base) + Left;
      Iov->iov_len -= Left;
    }
  }
  return true;
}

// Small messages must not wait for Nagle, as the session's socket doesn't.
void noDelay(int Fd) {
  int One = 1;
  setsockopt(Fd, IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One));
}

Expected<int> listenLoopback(sockaddr_in &Addr) {
  int Fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return sysError("socket");
  Addr = {};
  Addr.sin_family = AF_INET;
  Addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(Addr);
  if (bind(Fd, reinterpret_cast<sockaddr *>(&Addr), sizeof(Addr)) != 0 || listen(Fd, 1) != 0 ||
      getsockname(Fd, reinterpret_cast<sockaddr *>(&Addr), &Len) != 0) {
    Error Err = sysError("listen on 127.0.0.1");
    close(Fd);
    return Err;
  }
  return Fd;
}

// The kernel completes the handshake from the listen backlog, so connecting
// before accepting needs no second thread.
Expected<std::pair<int, int>> connectPair() {
  sockaddr_in Addr;
  auto Listener = listenLoopback(Addr);
  if (!Listener)
    return Listener.takeError();
  int Client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int Server = -1;
  if (Client >= 0 && connect(Client, reinterpret_cast<sockaddr *>(&Addr), sizeof(Addr)) == 0)
    Server = accept4(*Listener, nullptr, nullptr, SOCK_CLOEXEC);
  Error Err = Server < 0 ? sysError("loopback connect") : Error::success();
  close(*Listener);
  if (Err) {
    if (Client >= 0)
      close(Client);
    return Err;
  }
  noDelay(Client);
  noDelay(Server);
  return std::make_pair(Server, Client);
}

} // namespace

Expected<std::unique_ptr<EchoServer>> EchoServer::start() {
  auto Fds = connectPair();
  if (!Fds)
    return Fds.takeError();
  std::unique_ptr<EchoServer> E(new EchoServer(Fds->first, Fds->second));
  E->Server = std::thread([E = E.get()] { E->serve(); });
  return E;
}

// Each message is a u64 length then that many bytes; the reply is the bytes.
void EchoServer::serve() {
  std::vector<char> Buf;
  uint64_t Bytes = 0;
  while (readAll(ServerFd, reinterpret_cast<char *>(&Bytes), sizeof(Bytes))) {
    Buf.resize(Bytes);
    if (!readAll(ServerFd, Buf.data(), Bytes))
      return;
    iovec Iov[1] = {{Buf.data(), Buf.size()}};
    if (!writeAll(ServerFd, Iov, 1))
      return;
  }
}

Error EchoServer::roundTrip(const char *Out, char *In, size_t Bytes) {
  uint64_t Head = Bytes;
  // One writev for header and payload, so a small message is one segment.
  iovec Iov[2] = {{&Head, sizeof(Head)}, {const_cast<char *>(Out), Bytes}};
  if (!writeAll(ClientFd, Iov, 2))
    return sysError("echo send");
  if (!readAll(ClientFd, In, Bytes))
    return createStringError(inconvertibleErrorCode(), "echo reply cut short");
  return Error::success();
}

EchoServer::~EchoServer() {
  // The server thread sees end-of-stream and returns.
  shutdown(ClientFd, SHUT_RDWR);
  if (Server.joinable())
    Server.join();
  close(ClientFd);
  close(ServerFd);
}

} // namespace catalyst::remote::bench
