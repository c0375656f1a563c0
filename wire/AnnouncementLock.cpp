//===- AnnouncementLock.cpp - Live and stale announcements ---------------===//

#include "AnnouncementLock.h"

#include <cerrno>
#include <fcntl.h>

namespace catalyst::remote::wire {
namespace {

// The whole file, for as long as it is.
struct flock wholeFile(short Type) {
  struct flock L {};
  L.l_type = Type;
  L.l_whence = SEEK_SET;
  L.l_start = 0;
  L.l_len = 0;
  return L;
}

} // namespace

std::string announcementText(llvm::StringRef Address) {
  return Address.str() + "\n" + AnnouncementHeldLine + "\n";
}

llvm::StringRef announcedAddress(llvm::StringRef Text) {
  return Text.split('\n').first.trim();
}

bool declaresHeld(llvm::StringRef Text) {
  return Text.split('\n').second.trim() == AnnouncementHeldLine;
}

int holdAnnouncement(int Fd) {
  struct flock L = wholeFile(F_WRLCK);
  return ::fcntl(Fd, F_OFD_SETLK, &L) == 0 ? 0 : errno;
}

bool heldByItsWriter(int Fd) {
  struct flock L = wholeFile(F_WRLCK);
  if (::fcntl(Fd, F_OFD_GETLK, &L) != 0)
    return true;
  return L.l_type != F_UNLCK;
}

} // namespace catalyst::remote::wire
