//===- Assets.cpp - Files a host stores beside its kernels ----------------===//

#include "Assets.h"

#include "Log.h"
#include "sync/Mutex.h"
#include "wire/SysError.h"
#include "wire/WriteAll.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <map>
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
  // The shared root outlives this executor; a private one does not.
  bool Shared = false;
};

// Opened by the listener and inherited by every connection process.
OpenDir Root;
// The connection's own, in a connection process.
OpenDir Connection;

// The name each stored file came from in this connection, so that a second
// file of the same name is refused rather than replacing the first.
sync::Mutex ClaimsLock;
std::map<std::string, std::string> Claims GUARDED_BY(ClaimsLock);

std::error_code lastError() {
  return {errno, std::generic_category()};
}

Error failure(const Twine &What, std::error_code EC) {
  return createStringError(EC, What + ": " + EC.message());
}

Error refusal(const Twine &What) {
  return createStringError(std::make_error_code(std::errc::permission_denied), What);
}

Error badName(const Twine &What) {
  return createStringError(std::make_error_code(std::errc::invalid_argument), What);
}

std::string tempDirectory() {
  const char *Env = std::getenv("TMPDIR");
  std::error_code EC;
  fs::path Dir = fs::absolute(Env && *Env ? Env : "/tmp", EC);
  return EC ? std::string("/tmp") : Dir.string();
}

// Who else may use a directory: no one (a directory this executor made), or
// no one may write to it (the shared root, which Catalyst's executor may
// have made with the umask's mode).
enum class Access { Private, ReadableByOthers };

// Fd was opened from Name in Parent: Name must still be that directory, not
// a symlink, ours, and closed to everyone else as Allowed says.
Error checkOwned(int Parent, const char *Name, int Fd, const std::string &Shown, Access Allowed) {
  struct stat ByName, Opened;
  if (::fstatat(Parent, Name, &ByName, AT_SYMLINK_NOFOLLOW) != 0 || ::fstat(Fd, &Opened) != 0)
    return failure("cannot check " + Shown, lastError());
  if (!S_ISDIR(ByName.st_mode))
    return refusal(Shown + " is not a directory");
  if (ByName.st_dev != Opened.st_dev || ByName.st_ino != Opened.st_ino)
    return refusal(Shown + " was replaced while it was opened");
  if (ByName.st_uid != ::geteuid())
    return refusal(Shown + " is owned by uid " + Twine(ByName.st_uid) + ", not by this process");
  unsigned Mode = ByName.st_mode & 07777;
  if (Allowed == Access::Private && Mode != 0700)
    return refusal(Shown + " has mode " + wire::fileMode(Mode) + ", not 0700");
  if (Allowed == Access::ReadableByOthers && (Mode & 022))
    return refusal(Shown + " has mode " + wire::fileMode(Mode) + ": others may write to it");
  return Error::success();
}

// Opens directory Name in Parent without following a symlink and checks it;
// Made: this process just made it, so its mode is set whatever the umask
// made of it.
Expected<int> openOwned(int Parent, const char *Name, const std::string &Shown, Access Allowed,
                        bool Made) {
  int Fd = ::openat(Parent, Name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0)
    return failure("cannot open " + Shown + " as a directory (a symlink is not followed)",
                   lastError());
  Error Err = Made && ::fchmod(Fd, 0700) != 0
                  ? failure("cannot set the mode of " + Shown, lastError())
                  : checkOwned(Parent, Name, Fd, Shown, Allowed);
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
    LogLine() << "catalyst-remote-executor: cannot remove " << Path << ": " << EC.message();
}

void closeAndRemove(OpenDir &D) {
  if (D.Fd < 0)
    return;
  ::close(D.Fd);
  if (!D.Shared)
    removeTree(D.Path);
  D = {};
}

// $TMPDIR/catalyst-assets, made here or already this user's.
Expected<OpenDir> openSharedRoot(const std::string &Temp) {
  std::string Path = Temp + "/" + SharedAssetRootName;
  bool Made = ::mkdir(Path.c_str(), 0700) == 0;
  if (!Made && errno != EEXIST)
    return failure("cannot create " + Path, lastError());
  auto Fd = openOwned(AT_FDCWD, Path.c_str(), Path, Access::ReadableByOthers, Made);
  if (!Fd)
    return Fd.takeError();
  return OpenDir{Path, *Fd, true};
}

// <tmp>/catalyst-remote-XXXXXX, which no one else can predict.
Expected<OpenDir> makePrivateRoot(const std::string &Temp) {
  std::string Path = Temp + "/catalyst-remote-XXXXXX";
  if (!::mkdtemp(Path.data()))
    return failure("cannot create a private directory in " + Temp, lastError());
  auto Fd = openOwned(AT_FDCWD, Path.c_str(), Path, Access::Private, true);
  if (!Fd) {
    // Its error says why; an empty directory left in Temp holds nothing.
    ::rmdir(Path.c_str());
    return Fd.takeError();
  }
  return OpenDir{Path, *Fd, false};
}

// NUL shown as \0, so that a message shows the name the host sent.
std::string shown(StringRef Name) {
  std::string S;
  for (char C : Name)
    S += C ? std::string(1, C) : std::string("\\0");
  return S;
}

// The file name Name is stored under: its last component.
Expected<StringRef> storedName(StringRef Name) {
  if (Name.contains('\0'))
    return badName("asset name '" + shown(Name) + "' contains a NUL byte");
  StringRef Last = Name.substr(Name.rfind('/') + 1);
  if (Last.empty() || Last == "." || Last == "..")
    return badName("asset name '" + Name + "' does not end in a file name ('" + Last + "')");
  return Last;
}

// Records that Stored holds Name's bytes; true when it did not before.
Expected<bool> claim(StringRef Stored, StringRef Name) {
  sync::MutexLock Lock(ClaimsLock);
  auto [It, New] = Claims.try_emplace(Stored.str(), Name.str());
  if (!New && It->second != Name)
    return createStringError(std::make_error_code(std::errc::file_exists),
                             "asset '" + Name + "' would replace '" + It->second +
                                 "', stored before as '" + Stored +
                                 "' in this session: give one of them another file name");
  return New;
}

void unclaim(StringRef Stored) {
  sync::MutexLock Lock(ClaimsLock);
  Claims.erase(Stored.str());
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
  std::error_code EC = wire::writeAll(*Fd, Bytes);
  // On Linux the descriptor is released even when close is interrupted.
  if (::close(*Fd) != 0 && errno != EINTR && !EC)
    EC = lastError();
  if (!EC)
    return Error::success();
  ::unlinkat(Connection.Fd, Name.c_str(), 0);
  return failure("cannot write " + Connection.Path + "/" + Name, EC);
}

// Writes Bytes and renames them to Stored in the connection's directory.
Error writeInPlace(ArrayRef<char> Bytes, StringRef Stored) {
  std::string Temporary;
  if (auto Err = writeTemporary(Bytes, Temporary))
    return Err;
  if (::renameat(Connection.Fd, Temporary.c_str(), Connection.Fd, Stored.str().c_str()) == 0)
    return Error::success();
  Error Err =
      failure("cannot rename " + Connection.Path + "/" + Temporary + " into place", lastError());
  ::unlinkat(Connection.Fd, Temporary.c_str(), 0);
  return Err;
}

// A directory that a process of this pid left in the shared root, when an
// executor was killed before it could remove it.
Error removeStale(const std::string &Name, const std::string &Path) {
  struct stat St;
  if (::fstatat(Root.Fd, Name.c_str(), &St, AT_SYMLINK_NOFOLLOW) != 0)
    return failure("cannot check " + Path, lastError());
  if (St.st_uid != ::geteuid())
    return refusal(Path + " exists and is owned by uid " + Twine(St.st_uid));
  removeTree(Path);
  return Error::success();
}

} // namespace

Error createAssetRoot() {
  std::string Temp = tempDirectory();
  auto Shared = openSharedRoot(Temp);
  if (Shared) {
    Root = *Shared;
    return Error::success();
  }
  std::string Why = toString(Shared.takeError());
  auto Private = makePrivateRoot(Temp);
  if (!Private)
    return Private.takeError();
  Root = *Private;
  LogLine() << "catalyst-remote-executor: assets go to " << Root.Path << ", not to " << Temp << "/"
            << SharedAssetRootName << ": " << Why;
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
  int Made = ::mkdirat(Root.Fd, Name.c_str(), 0700);
  if (Made != 0 && errno == EEXIST && Root.Shared) {
    if (auto Err = removeStale(Name, Path))
      return Err;
    Made = ::mkdirat(Root.Fd, Name.c_str(), 0700);
  }
  if (Made != 0)
    return failure("cannot create the asset directory " + Path, lastError());
  auto Fd = openOwned(Root.Fd, Name.c_str(), Path, Access::Private, true);
  if (!Fd)
    return Fd.takeError();
  Connection = {Path, *Fd, false};
  if (::setenv(AssetDirEnv, Path.c_str(), 1) != 0)
    return failure("cannot set " + Twine(AssetDirEnv), lastError());
  return Error::success();
}

const std::string &assetDirectory() {
  return Connection.Path;
}

Error storeAsset(ArrayRef<char> Bytes, StringRef Name) {
  auto Stored = storedName(Name);
  if (!Stored)
    return Stored.takeError();
  auto Named = [&](Error Err) {
    return createStringError(inconvertibleErrorCode(),
                             "asset '" + shown(Name) + "': " + toString(std::move(Err)));
  };
  if (Connection.Fd < 0)
    return Named(createStringError(inconvertibleErrorCode(),
                                   "this connection has no asset directory (see the log above)"));
  auto New = claim(*Stored, Name);
  if (!New)
    return New.takeError();
  Error Err = writeInPlace(Bytes, *Stored);
  if (Err && *New)
    unclaim(*Stored);
  return Err ? Named(std::move(Err)) : Error::success();
}

void removeAssets(int Pid) {
  if (!Root.Path.empty())
    removeTree(Root.Path + "/" + std::to_string(Pid));
}

void removeAssets() {
  closeAndRemove(Connection);
}

} // namespace catalyst::remote::executor
