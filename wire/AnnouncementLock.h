//===- AnnouncementLock.h - Live and stale announcements -------*- C++ -*-===//
//
// An executor's announcement file (--announce DIR) is removed when the
// executor stops, but an executor killed with SIGKILL removes nothing,
// and Slurm does just that to a step whose srun is told to end. So the
// executor holds a lock on its file for as long as it lives: an open
// file description lock (F_OFD_SETLK), which the kernel drops when the
// last process holding the description ends, however it ends; on NFS the
// server drops it too. A host reading the directory treats a file that
// says it is held ("lock" on its second line) and that nobody holds as
// stale: it skips it and removes it. A file without that line (written
// by hand) is never stale.
//
//   Writer:  write(Fd, announcementText(Address)); holdAnnouncement(Fd);
//            // Fd stays open until the process ends
//   Reader:  if (declaresHeld(Text) && !heldByItsWriter(Fd)) ...stale
//
// Both ends include this header, so the format cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_ANNOUNCEMENTLOCK_H
#define CATALYST_REMOTE_WIRE_ANNOUNCEMENTLOCK_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace catalyst::remote::wire {

// The second line of a file whose writer holds a lock on it.
inline constexpr char AnnouncementHeldLine[] = "lock";

// "ADDRESS\nlock\n".
std::string announcementText(llvm::StringRef Address);

// The address (the first line, trimmed) of an announcement's text.
llvm::StringRef announcedAddress(llvm::StringRef Text);

// Whether Text says its writer holds a lock on the file.
bool declaresHeld(llvm::StringRef Text);

// Takes the writer's lock on Fd (open for writing), for as long as the
// open file description lives. Returns 0 or the errno of the failure.
int holdAnnouncement(int Fd);

// Whether some process holds the writer's lock on the file Fd refers to.
// A file system that cannot tell (no lock support) counts as held: an
// announcement is never dropped on a guess.
bool heldByItsWriter(int Fd);

} // namespace catalyst::remote::wire

#endif
