//===- Assets.cpp - Files a host stores beside its kernels ----------------===//

#include "Assets.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

using namespace llvm;
namespace fs = std::filesystem;

namespace catalyst::remote::executor {

namespace {

// A directory kept open, so that files are made relative to the directory
// that was checked, not to whatever its path names later.
struct OpenDir {
  std::string Path;
  int Fd = -1;
};

// Made by the listener and inherited by every connection process.
OpenDir Root;
// The connection's own, in a connection process.
OpenDir Connection;

std::error_code lastError() {
  return {errno, std::generic_category()};
}

Error failure(const Twine &What, std::error_code EC) {
  return createStringError(EC, What + ": " + EC.message());
}

Error refusal(const Twine &What) {
  return createStringError(std::make_error_code(std::errc::permission_denied), What);
}

std::string tempDirectory() {
  const char *Env = std::getenv("TMPDIR");
  std::error_code EC;
  fs::path Dir = fs::absolute(Env && *Env ? Env : "/tmp", EC);
  return EC ? std::string("/tmp") : Dir.string();
}

std::string octal(unsigned Mode) {
  std::string S;
  raw_string_ostream(S) << format("0%o", Mode);
  return S;
}

// Fd was opened from Name in Parent: Name must still be that directory, not
// a symlink, ours, and closed to everyone else.
Error checkPrivate(int Parent, const char *Name, int Fd, const std::string &Shown) {
  struct stat ByName, Opened;
  if (::fstatat(Parent, Name, &ByName, AT_SYMLINK_NOFOLLOW) != 0 || ::fstat(Fd, &Opened) != 0)
    return failure("cannot check " + Shown, lastError());
  if (!S_ISDIR(ByName.st_mode))
    return refusal(Shown + " is not a directory");
  if (ByName.st_dev != Opened.st_dev || ByName.st_ino != Opened.st_ino)
    return refusal(Shown + " was replaced while it was opened");
  if (ByName.st_uid != ::geteuid())
    return refusal(Shown + " is owned by uid " + Twine(ByName.st_uid) + ", not by this process");
  if ((ByName.st_mode & 07777) != 0700)
    return refusal(Shown + " has mode " + octal(ByName.st_mode & 07777) + ", not 0700");
  return Error::success();
}

// Opens a directory this process just made, sets its mode whatever the umask
// made of it, and checks it.
Expected<int> openPrivate(int Parent, const char *Name, const std::string &Shown) {
  int Fd = ::openat(Parent, Name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0)
    return failure("cannot open " + Shown, lastError());
  Error Err = ::fchmod(Fd, 0700) == 0 ? checkPrivate(Parent, Name, Fd, Shown)
                                      : failure("cannot set the mode of " + Shown, lastError());
  if (Err) {
    ::close(Fd);
    return Err;
  }
  return Fd;
}

void removeTree(const std::string &Path) {
  std::error_code EC;
  // remove_all removes symlinks, never what they point at.
  fs::remove_all(Path, EC);
  if (EC)
    errs() << "catalyst-remote-executor: cannot remove " << Path << ": " << EC.message() << "\n";
}

void closeAndRemove(OpenDir &D) {
  if (D.Fd < 0)
    return;
  ::close(D.Fd);
  removeTree(D.Path);
  D = {};
}

// NUL shown as \0, so that a message shows the name the host sent.
std::string shown(StringRef Name) {
  std::string S;
  for (char C : Name)
    S += C ? std::string(1, C) : std::string("\\0");
  return S;
}

Error checkName(StringRef Name) {
  if (Name.empty() || Name == "." || Name == ".." || Name.contains('/') || Name.contains('\0'))
    return createStringError(std::make_error_code(std::errc::invalid_argument),
                             "asset name '" + shown(Name) +
                                 "' is not a plain file name (no '/', not '.' or '..', no NUL)");
  return Error::success();
}

// Handles short writes and signals.
std::error_code writeAll(int Fd, ArrayRef<char> Bytes) {
  while (!Bytes.empty()) {
    ssize_t N = ::write(Fd, Bytes.data(), Bytes.size());
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return lastError();
    Bytes = Bytes.drop_front(size_t(N));
  }
  return {};
}

// A file no one else has open: a name taken (by an asset of that name, say)
// only moves on to the next.
Expected<int> createTemporary(std::string &Name) {
  static std::atomic<uint64_t> Counter{0};
  for (;;) {
    Name = ".incoming-" + std::to_string(Counter++);
    int Fd = ::openat(Connection.Fd, Name.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (Fd >= 0)
      return Fd;
    if (errno != EEXIST)
      return failure("cannot create " + Connection.Path + "/" + Name, lastError());
  }
}

// Leaves nothing behind when it fails.
Error writeTemporary(ArrayRef<char> Bytes, std::string &Name) {
  auto Fd = createTemporary(Name);
  if (!Fd)
    return Fd.takeError();
  std::error_code EC = writeAll(*Fd, Bytes);
  // On Linux the descriptor is released even when close is interrupted.
  if (::close(*Fd) != 0 && errno != EINTR && !EC)
    EC = lastError();
  if (!EC)
    return Error::success();
  ::unlinkat(Connection.Fd, Name.c_str(), 0);
  return failure("cannot write " + Connection.Path + "/" + Name, EC);
}

} // namespace

Error createAssetRoot() {
  std::string Temp = tempDirectory();
  std::string Path = Temp + "/catalyst-remote-XXXXXX";
  if (!::mkdtemp(Path.data()))
    return failure("cannot create a private directory in " + Temp, lastError());
  auto Fd = openPrivate(AT_FDCWD, Path.c_str(), Path);
  if (!Fd) {
    ::rmdir(Path.c_str());
    return Fd.takeError();
  }
  Root = {Path, *Fd};
  return Error::success();
}

void removeAssetRoot() {
  closeAndRemove(Root);
}

Error createAssetDirectory() {
  if (Root.Fd < 0)
    return createStringError(inconvertibleErrorCode(), "no asset root: assets cannot be stored");
  // Kernels have no business with the other connections' directories.
  scope_exit CloseRoot([] {
    ::close(Root.Fd);
    Root.Fd = -1;
  });
  std::string Name = std::to_string(::getpid());
  std::string Path = Root.Path + "/" + Name;
  if (::mkdirat(Root.Fd, Name.c_str(), 0700) != 0)
    return failure("cannot create the asset directory " + Path, lastError());
  auto Fd = openPrivate(Root.Fd, Name.c_str(), Path);
  if (!Fd)
    return Fd.takeError();
  Connection = {Path, *Fd};
  if (::setenv(AssetDirEnv, Path.c_str(), 1) != 0)
    return failure("cannot set " + Twine(AssetDirEnv), lastError());
  return Error::success();
}

const std::string &assetDirectory() {
  return Connection.Path;
}

Error storeAsset(ArrayRef<char> Bytes, StringRef Name) {
  auto Named = [&](Error Err) {
    return createStringError(inconvertibleErrorCode(),
                             "asset '" + shown(Name) + "': " + toString(std::move(Err)));
  };
  if (auto Err = checkName(Name))
    return Err;
  if (Connection.Fd < 0)
    return Named(createStringError(inconvertibleErrorCode(),
                                   "this connection has no asset directory (see the log above)"));
  std::string Temporary;
  if (auto Err = writeTemporary(Bytes, Temporary))
    return Named(std::move(Err));
  if (::renameat(Connection.Fd, Temporary.c_str(), Connection.Fd, Name.str().c_str()) != 0) {
    Error Err =
        failure("cannot rename " + Connection.Path + "/" + Temporary + " into place", lastError());
    ::unlinkat(Connection.Fd, Temporary.c_str(), 0);
    return Named(std::move(Err));
  }
  return Error::success();
}

void removeAssets(int Pid) {
  if (!Root.Path.empty())
    removeTree(Root.Path + "/" + std::to_string(Pid));
}

void removeAssets() {
  closeAndRemove(Connection);
}

} // namespace catalyst::remote::executor
