//===- UnixSocket.cpp - Abstract Unix sockets on one machine --------------===//

#include "UnixSocket.h"

#include "PeerText.h"
#include "SysError.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

socklen_t abstractAddress(StringRef Name, sockaddr_un &A) {
  A = sockaddr_un{};
  A.sun_family = AF_UNIX;
  std::memcpy(A.sun_path + 1, Name.data(), Name.size());
  return socklen_t(offsetof(sockaddr_un, sun_path) + 1 + Name.size());
}

Expected<std::string> randomName() {
  uint8_t Bytes[16];
  if (::getrandom(Bytes, sizeof(Bytes), 0) != ssize_t(sizeof(Bytes)))
    return sysError("drawing a name for the local socket", errno);
  std::string Name = "catalyst-remote-";
  raw_string_ostream OS(Name);
  for (uint8_t B : Bytes)
    OS << format_hex_no_prefix(B, 2);
  return Name;
}

Error checkPeer(int Fd, uint32_t Pid) {
  PeerProcess P = peerOf(Fd);
  struct stat Proc {};
  std::string Path = "/proc/" + std::to_string(Pid);
  if (P.Pid != pid_t(Pid))
    return createStringError(inconvertibleErrorCode(),
                             "the local socket is served by process %d, not by the executor's "
                             "listener %u",
                             int(P.Pid), Pid);
  if (::stat(Path.c_str(), &Proc) != 0)
    return sysError("cannot tell which user the local socket's listener runs as: " + Path, errno);
  if (Proc.st_uid != P.Uid)
    return createStringError(inconvertibleErrorCode(),
                             "the local socket's listener %u runs as another user than it did "
                             "when it listened",
                             Pid);
  return Error::success();
}

} // namespace

// The wait for room in a full backlog lasts as long as the socket's send
// timeout allows.
int connectUnixBy(int Fd, const sockaddr_un &A, socklen_t Len,
                  std::chrono::steady_clock::time_point By) {
  auto Left = std::chrono::ceil<std::chrono::microseconds>(By - std::chrono::steady_clock::now());
  if (Left.count() <= 0)
    return ETIMEDOUT;
  timeval Tv{time_t(Left.count() / 1000000), suseconds_t(Left.count() % 1000000)};
  // Unbounded, the connect could outlast By.
  if (::setsockopt(Fd, SOL_SOCKET, SO_SNDTIMEO, &Tv, sizeof(Tv)) != 0)
    return errno;
  int Err;
  do
    Err = ::connect(Fd, reinterpret_cast<const sockaddr *>(&A), Len) == 0 ? 0 : errno;
  while (Err == EINTR);
  timeval Never{0, 0};
  // Left in place, the timeout would fail the session's sends later.
  if (::setsockopt(Fd, SOL_SOCKET, SO_SNDTIMEO, &Never, sizeof(Never)) != 0 && Err == 0)
    return errno;
  return Err == EAGAIN ? ETIMEDOUT : Err;
}

Expected<int> listenLocal(std::string &Name) {
  auto Drawn = randomName();
  if (!Drawn)
    return Drawn.takeError();
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (Fd < 0)
    return sysError("creating the local socket", errno);
  sockaddr_un A;
  socklen_t Len = abstractAddress(*Drawn, A);
  if (::bind(Fd, reinterpret_cast<sockaddr *>(&A), Len) != 0 || ::listen(Fd, SOMAXCONN) != 0) {
    int Errno = errno;
    ::close(Fd);
    return sysError("listening on the local socket @" + *Drawn, Errno);
  }
  Name = *Drawn;
  return Fd;
}

Expected<int> connectLocal(StringRef Name, uint32_t Pid, std::chrono::steady_clock::time_point By) {
  sockaddr_un A;
  if (Name.empty() || Name.size() >= sizeof(A.sun_path))
    return createStringError(inconvertibleErrorCode(), "invalid local socket name");
  socklen_t Len = abstractAddress(Name, A);
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return sysError("creating a local socket", errno);
  Error Err = Error::success();
  if (int E = connectUnixBy(Fd, A, Len, By))
    // The name came in the executor's setup message.
    Err = sysError("connecting to the local socket @" + quotePeerText(Name), E);
  else
    Err = checkPeer(Fd, Pid);
  if (Err) {
    ::close(Fd);
    return Err;
  }
  return Fd;
}

std::chrono::microseconds localSpin() {
  static const std::chrono::microseconds Spin = [] {
    const char *Text = std::getenv("CATALYST_REMOTE_SPIN_US");
    unsigned Us = 0;
    if (!Text || StringRef(Text).getAsInteger(10, Us))
      Us = 100; // unset, or not a number
    return std::chrono::microseconds(std::min(Us, 100000u));
  }();
  return Spin;
}

bool isUnixSocket(int Fd) {
  sockaddr_storage A{};
  socklen_t Len = sizeof(A);
  return ::getsockname(Fd, reinterpret_cast<sockaddr *>(&A), &Len) == 0 && A.ss_family == AF_UNIX;
}

PeerProcess peerOf(int Fd) {
  ucred C{};
  socklen_t Len = sizeof(C);
  if (::getsockopt(Fd, SOL_SOCKET, SO_PEERCRED, &C, &Len) != 0)
    return {};
  return {C.pid, C.uid};
}

} // namespace catalyst::remote::wire
