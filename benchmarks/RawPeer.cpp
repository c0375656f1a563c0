//===- RawPeer.cpp - The raw TCP link, for comparison ---------------------===//

#include "RawPeer.h"

#include "NetUtil.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
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

// An address's resolution or a listener's failure, as an Error.
Error toolError(const std::string &Why) {
  return createStringError(inconvertibleErrorCode(), Why);
}

Expected<tools::SocketAddress> resolve(const std::string &HostPort) {
  tools::SocketAddress A;
  std::string Why;
  if (!tools::parseAddress(HostPort, A, Why))
    return toolError(Why);
  return A;
}

// Binds A (port 0: any) and listens; A becomes the bound address.
Expected<int> listenOn(tools::SocketAddress &A) {
  std::string Why;
  int Fd = tools::listenOn(A, 0, Why);
  if (Fd < 0)
    return toolError(Why);
  if (A.family() != AF_UNIX)
    A = tools::localAddress(Fd);
  return Fd;
}

// One connection: the sizes first, then request in, reply out, until the
// benchmark hangs up. The buffer is touched before the first request so no
// page faults land in a timed exchange.
void serveLink(int Fd) {
  uint64_t Sizes[2];
  if (!tools::readAll(Fd, Sizes, sizeof(Sizes)))
    return;
  uint64_t Capacity = std::max<uint64_t>({Sizes[0], Sizes[1], 1});
  char *Buf = static_cast<char *>(std::malloc(Capacity));
  if (!Buf)
    return;
  std::memset(Buf, 0x5a, Capacity);
  while (tools::readAll(Fd, Buf, Sizes[0]) && tools::writeAll(Fd, Buf, Sizes[1])) {
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
    tools::setNoDelay(Fd);
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
  auto Addr = resolve("127.0.0.1:0");
  if (!Addr)
    return Addr.takeError();
  return startOn(*Addr);
}

// An abstract name: nothing left in the file system if the peer is killed.
Expected<std::unique_ptr<RawPeer>> RawPeer::startLocal() {
  tools::SocketAddress Addr;
  sockaddr_un &Un = *reinterpret_cast<sockaddr_un *>(&Addr.Storage);
  Un.sun_family = AF_UNIX;
  std::string Name = "catalyst-remote-bench-raw-" + std::to_string(::getpid());
  std::memcpy(Un.sun_path + 1, Name.data(), Name.size());
  Addr.Length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + Name.size());
  return startOn(Addr);
}

Expected<std::unique_ptr<RawPeer>> RawPeer::startOn(tools::SocketAddress Addr) {
  auto Listener = listenOn(Addr);
  if (!Listener)
    return Listener.takeError();
  pid_t Parent = ::getpid();
  pid_t Pid = ::fork();
  if (Pid == 0)
    runPeer(*Listener, Parent);
  Error Err = Pid < 0 ? sysError("fork the raw peer") : Error::success();
  ::close(*Listener);
  if (Err)
    return Err;
  return std::unique_ptr<RawPeer>(new RawPeer(Pid, Addr));
}

Expected<std::unique_ptr<RawPeer>> RawPeer::attach(const std::string &HostPort) {
  auto Addr = resolve(HostPort);
  if (!Addr)
    return Addr.takeError();
  return std::unique_ptr<RawPeer>(new RawPeer(0, *Addr));
}

RawPeer::~RawPeer() {
  if (Pid <= 0)
    return;
  ::kill(Pid, SIGKILL);
  ::waitpid(Pid, nullptr, 0);
}

std::string RawPeer::address() const {
  if (Addr.family() == AF_UNIX)
    return "@" + std::string(reinterpret_cast<const sockaddr_un *>(&Addr.Storage)->sun_path + 1);
  return tools::formatAddress(Addr);
}

Expected<std::unique_ptr<RawLink>> RawPeer::connect(uint64_t Request, uint64_t Reply) {
  int Fd = ::socket(Addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return sysError("socket");
  std::unique_ptr<RawLink> L(new RawLink(Fd, Request, Reply));
  if (::connect(Fd, Addr.get(), Addr.Length) != 0)
    return sysError("connect to the raw peer at " + address());
  tools::setNoDelay(Fd);
  uint64_t Sizes[2] = {Request, Reply};
  if (!tools::writeAll(Fd, Sizes, sizeof(Sizes)))
    return sysError("send sizes to the raw peer");
  return L;
}

int serveRawPeer(const std::string &HostPort) {
  auto Addr = resolve(HostPort);
  if (!Addr) {
    errs() << "catalyst-remote-bench: " << toString(Addr.takeError()) << "\n";
    return 2;
  }
  auto Listener = listenOn(*Addr);
  if (!Listener) {
    errs() << "catalyst-remote-bench: " << toString(Listener.takeError()) << "\n";
    return 1;
  }
  // Flushed at once: a harness waits for this line to learn the port.
  outs() << "catalyst-remote-bench: raw peer listening on " << tools::formatAddress(*Addr) << "\n";
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
  if (!tools::writeAll(Fd, Out, Request))
    return sysError("raw send");
  if (!tools::readAll(Fd, Into ? Into : In.data(), Reply))
    return createStringError(inconvertibleErrorCode(), "raw reply cut short");
  return Error::success();
}

} // namespace catalyst::remote::bench
