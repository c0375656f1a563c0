//===- SocketFile.cpp - Unix sockets named in the file system -------------===//

#include "SocketFile.h"

#include "SysError.h"
#include "UnixSocket.h"
#include "catalyst/remote/Failure.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

Error pathError(StringRef Path, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(),
                           "cannot listen on " + UnixScheme + Path + ": " + Why);
}

Error pathError(StringRef Path, const Twine &What, int Errno) {
  return pathError(Path, What + ": " + std::strerror(Errno));
}

// Path's address; false when it does not fit one.
bool addressOf(StringRef Path, sockaddr_un &A, socklen_t &Len) {
  A = sockaddr_un{};
  A.sun_family = AF_UNIX;
  if (Path.empty() || Path.size() >= sizeof(A.sun_path) || Path.contains('\0'))
    return false;
  std::memcpy(A.sun_path, Path.data(), Path.size());
  Len = socklen_t(offsetof(sockaddr_un, sun_path) + Path.size() + 1);
  return true;
}

// Whoever may write to the directory could put a socket of their own at
// Path, for hosts to reach instead of the executor.
Error checkDirectory(StringRef Path) {
  std::string Dir = sys::path::parent_path(Path).str();
  struct stat St;
  if (::stat(Dir.c_str(), &St) != 0)
    return pathError(Path, "cannot stat its directory " + Dir, errno);
  if (!S_ISDIR(St.st_mode))
    return pathError(Path, Dir + " is not a directory");
  if (St.st_uid != ::geteuid() && St.st_uid != 0)
    return pathError(Path, formatv("its directory {0} belongs to uid {1}, not to this user (uid "
                                   "{2}) or root",
                                   Dir, St.st_uid, ::geteuid()));
  if (St.st_mode & (S_IWGRP | S_IWOTH))
    return pathError(Path, "its directory " + Dir + " is writable by group or others (mode " +
                               fileMode(St.st_mode) +
                               "), who could put a socket of their own there: use a directory "
                               "only you can write to, such as $XDG_RUNTIME_DIR");
  return Error::success();
}

// What listens at Path: 0 when nothing does (connect is refused), else an
// errno value (0 itself becomes EADDRINUSE).
int probe(const sockaddr_un &A, socklen_t Len) {
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (Fd < 0)
    return errno;
  int Err = ::connect(Fd, reinterpret_cast<const sockaddr *>(&A), Len) == 0 ? EADDRINUSE : errno;
  ::close(Fd);
  // A full backlog (EAGAIN) has a listener too.
  if (Err == EAGAIN)
    return EADDRINUSE;
  return Err == ECONNREFUSED ? 0 : Err;
}

// Makes room at Path: nothing there, or a socket nothing listens on (an
// executor that was killed left it), which goes.
Error clearPath(StringRef Path, const sockaddr_un &A, socklen_t Len) {
  struct stat St;
  if (::lstat(A.sun_path, &St) != 0)
    return errno == ENOENT ? Error::success() : pathError(Path, "cannot stat it", errno);
  if (!S_ISSOCK(St.st_mode))
    return pathError(Path, "it exists and is not a socket; remove it or choose another path");
  if (int Err = probe(A, Len))
    return Err == EADDRINUSE
               ? pathError(Path, "another process listens on it (another executor?)")
               : pathError(Path, "cannot tell whether another process listens on it", Err);
  if (::unlink(A.sun_path) != 0 && errno != ENOENT)
    return pathError(Path, "cannot remove the stale socket there", errno);
  return Error::success();
}

// Binds Fd at A with mode 0600. The umask is the process's: a file another
// thread creates meanwhile only gets stricter permissions.
int bindPrivately(int Fd, const sockaddr_un &A, socklen_t Len) {
  mode_t Old = ::umask(0177);
  int Err = ::bind(Fd, reinterpret_cast<const sockaddr *>(&A), Len) == 0 ? 0 : errno;
  ::umask(Old);
  return Err;
}

} // namespace

std::optional<StringRef> socketFilePath(StringRef Address) {
  if (!Address.consume_front(UnixScheme))
    return std::nullopt;
  return Address;
}

Expected<int> listenAtPath(StringRef Given, SocketFile &File) {
  SmallString<128> Path(Given);
  if (Given.empty())
    return pathError(Given, "expected unix:PATH, PATH naming the socket file to create");
  if (std::error_code EC = sys::fs::make_absolute(Path))
    return pathError(Given, "cannot make the path absolute", EC.value());
  sockaddr_un A;
  socklen_t Len;
  if (!addressOf(Path, A, Len))
    return pathError(Path, formatv("the path has {0} bytes; a socket's may have at most {1}",
                                   Path.size(), sizeof(A.sun_path) - 1));
  if (auto Err = checkDirectory(Path))
    return Err;
  if (auto Err = clearPath(Path, A, Len))
    return Err;
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (Fd < 0)
    return pathError(Path, "cannot create a socket", errno);
  struct stat St;
  int Err = bindPrivately(Fd, A, Len);
  bool Bound = !Err;
  if (!Err && ::lstat(A.sun_path, &St) != 0)
    Err = errno;
  if (!Err && ::listen(Fd, SOMAXCONN) != 0)
    Err = errno;
  if (Err) {
    if (Bound)
      // The bind's own failure is what is reported; a file left is named by it.
      ::unlink(A.sun_path);
    ::close(Fd);
    return pathError(Path, std::strerror(Err));
  }
  File = {Path.str().str(), St.st_dev, St.st_ino};
  return Fd;
}

void removeSocketFile(const SocketFile &File) {
  struct stat St;
  if (!File.Path.empty() && ::lstat(File.Path.c_str(), &St) == 0 && St.st_dev == File.Device &&
      St.st_ino == File.Inode)
    // Leaving: a file that cannot go is refused by the next bind, which says so.
    ::unlink(File.Path.c_str());
}

Expected<int> connectToPath(StringRef Path, std::chrono::steady_clock::time_point By) {
  // Nothing listening there is the usual failure; the kind of the others
  // is named.
  auto Fail = [&](const Twine &Why, FailureKind Kind = FailureKind::Unreachable) {
    return makeFailure(Kind, "cannot connect to " + UnixScheme + Path + ": " + Why);
  };
  sockaddr_un A;
  socklen_t Len;
  if (!addressOf(Path, A, Len))
    return Fail(formatv("expected unix:PATH, PATH of at most {0} bytes", sizeof(A.sun_path) - 1),
                FailureKind::BadArgument);
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return Fail(std::strerror(errno), FailureKind::Other);
  Error Err = Error::success();
  if (int E = connectUnixBy(Fd, A, Len, By))
    Err = Fail(std::strerror(E));
  else if (Error Who = checkPeerUser(Fd))
    // Another user's process at the path: the kernel's word on who the
    // peer is, which is what authenticates it here.
    Err = Fail(toString(std::move(Who)), FailureKind::Authentication);
  if (Err) {
    ::close(Fd);
    return Err;
  }
  return Fd;
}

bool isSocketFile(int Fd) {
  sockaddr_un A{};
  socklen_t Len = sizeof(A);
  return ::getsockname(Fd, reinterpret_cast<sockaddr *>(&A), &Len) == 0 &&
         A.sun_family == AF_UNIX && Len > offsetof(sockaddr_un, sun_path) && A.sun_path[0] != '\0';
}

Error checkPeerUser(int Fd) {
  ucred C{};
  socklen_t Len = sizeof(C);
  if (::getsockopt(Fd, SOL_SOCKET, SO_PEERCRED, &C, &Len) != 0)
    return sysError("cannot tell which user the process at the other end runs as", errno);
  if (C.uid != ::geteuid())
    return createStringError(inconvertibleErrorCode(),
                             "the process at the other end (pid %d) runs as uid %u, not as this "
                             "process's user (uid %u)",
                             int(C.pid), unsigned(C.uid), unsigned(::geteuid()));
  return Error::success();
}

} // namespace catalyst::remote::wire
