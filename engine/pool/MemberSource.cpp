//===- MemberSource.cpp - Directory and list sources of pool members -----===//

#include "MemberSource.h"

#include "catalyst/remote/Failure.h"
#include "wire/AnnouncementLock.h"
#include "wire/SysError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::pool {

MemberSource::~MemberSource() = default;

namespace {

// An address is one line of at most this many printable characters: far
// more than any host:port or socket path needs.
constexpr size_t MaxAddressBytes = 1024;
constexpr StringLiteral Suffix = ".addr";

bool plausibleAddress(StringRef A) {
  return !A.empty() && A.size() <= MaxAddressBytes &&
         llvm::all_of(A, [](char C) { return C > ' ' && C < 0x7f; });
}

// Removes Name, a stale announcement, unless another file has been put
// in its place since St was taken (a rerun of the same rank).
void removeStale(int DirFd, const char *Name, const struct stat &St) {
  struct stat Now;
  if (::fstatat(DirFd, Name, &Now, AT_SYMLINK_NOFOLLOW) == 0 && Now.st_dev == St.st_dev &&
      Now.st_ino == St.st_ino)
    // Fails only when the file is gone already, or the directory is not
    // writable here: the file is skipped all the same.
    ::unlinkat(DirFd, Name, 0);
}

// The address in an announcement file, or nothing when it is not one: a
// file being replaced, a stray file, something an unfriendly writer put
// there (a FIFO would block an open, a symbolic link lead elsewhere), or
// the file of an executor that is gone without removing it (killed with
// SIGKILL), which is removed (wire/AnnouncementLock.h).
std::optional<std::string> readAnnouncement(int DirFd, const char *Name) {
  int Fd = ::openat(DirFd, Name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (Fd < 0)
    return std::nullopt;
  struct stat St;
  char Buf[MaxAddressBytes + 8];
  ssize_t N = -1;
  if (::fstat(Fd, &St) == 0 && S_ISREG(St.st_mode) && St.st_size <= off_t(sizeof(Buf)))
    N = ::read(Fd, Buf, sizeof(Buf));
  StringRef Text(Buf, N > 0 ? size_t(N) : 0);
  bool Stale = N > 0 && wire::declaresHeld(Text) && !wire::heldByItsWriter(Fd);
  ::close(Fd);
  if (Stale)
    removeStale(DirFd, Name, St);
  StringRef Address = wire::announcedAddress(Text);
  if (N <= 0 || Stale || !plausibleAddress(Address))
    return std::nullopt;
  return Address.str();
}

class DirectorySource final : public MemberSource {
public:
  explicit DirectorySource(std::string Dir) : Dir(std::move(Dir)) {}

  Expected<std::vector<Announced>> poll() override {
    DIR *D = ::opendir(Dir.c_str());
    if (!D)
      return wire::sysError("pool directory " + Dir, errno);
    std::vector<Announced> Found;
    while (struct dirent *E = ::readdir(D)) {
      StringRef Name(E->d_name);
      // Executors write ".<name>.addr.<pid>" first and rename it.
      if (Name.starts_with(".") || !Name.ends_with(Suffix))
        continue;
      if (auto Address = readAnnouncement(::dirfd(D), E->d_name))
        Found.push_back({Name.drop_back(Suffix.size()).str(), std::move(*Address)});
    }
    ::closedir(D);
    llvm::sort(Found, [](const Announced &A, const Announced &B) { return A.Name < B.Name; });
    return Found;
  }

  std::string describe() const override { return "directory " + Dir; }

private:
  std::string Dir;
};

class ListSource final : public MemberSource {
public:
  explicit ListSource(std::vector<std::string> Addresses) {
    for (std::string &A : Addresses)
      Members.push_back({A, A});
  }

  Expected<std::vector<Announced>> poll() override { return Members; }

  std::string describe() const override {
    return std::to_string(Members.size()) + " listed address" + (Members.size() == 1 ? "" : "es");
  }

private:
  std::vector<Announced> Members;
};

bool namesDirectory(StringRef Spec) {
  return Spec.starts_with("/") || Spec.starts_with(".") || !Spec.contains(':');
}

} // namespace

std::unique_ptr<MemberSource> directorySource(std::string Dir) {
  return std::make_unique<DirectorySource>(std::move(Dir));
}

std::unique_ptr<MemberSource> listSource(std::vector<std::string> Addresses) {
  return std::make_unique<ListSource>(std::move(Addresses));
}

Expected<std::unique_ptr<MemberSource>> memberSourceFor(StringRef Spec) {
  if (Spec.empty())
    return makeFailure(FailureKind::BadArgument,
                       "empty pool address: give pool:DIR, pool:pmix or pool:ADDR,ADDR,...");
  if (Spec == "pmix")
    return pmixSource();
  if (namesDirectory(Spec))
    return directorySource(Spec.str());
  SmallVector<StringRef, 8> Parts;
  Spec.split(Parts, ',');
  std::vector<std::string> Addresses;
  for (StringRef P : Parts) {
    P = P.trim();
    if (!plausibleAddress(P))
      return makeFailure(FailureKind::BadArgument, "pool address list '" + Spec + "': entry " +
                                                       Twine(Addresses.size() + 1) +
                                                       " is empty or not an address");
    if (llvm::is_contained(Addresses, P))
      return makeFailure(FailureKind::BadArgument,
                         "pool address list '" + Spec + "' names " + P + " twice");
    Addresses.push_back(P.str());
  }
  return listSource(std::move(Addresses));
}

} // namespace catalyst::remote::pool
