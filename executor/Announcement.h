//===- Announcement.h - Telling hosts where this executor listens -*- C++ -*-===//
//
// An executor started by a cluster's launcher (srun, mpirun) on a port the
// kernel chose says where hosts can reach it in a directory they share
// (--announce DIR): one file per executor, named after the job, step and
// rank that started it so that steps and reruns never collide, holding the
// address hosts should dial, written whole (a temporary file renamed into
// place) once the executor listens. Hosts poll the directory: inotify does
// not see other nodes' writes on NFS.
//
//   if (auto Err = announceIn(Dir, Listeners)) ...   // once listening
//   withdrawAnnouncement();                          // first thing on a stop
//
// The executor holds a lock on the file for as long as it lives
// (wire/AnnouncementLock.h): one killed with SIGKILL leaves a file that
// hosts know to be stale.
//
// The file goes before anything else when the executor stops: a launcher
// sends SIGKILL soon after SIGTERM (Open MPI one second later), and a file
// left behind would send hosts to a dead address. withdrawAnnouncement()
// is async-signal-safe for that reason.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_ANNOUNCEMENT_H
#define CATALYST_REMOTE_EXECUTOR_ANNOUNCEMENT_H

#include "Listener.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace catalyst::remote::executor {

// "<job>.<step>.<rank>" from Slurm's variables, else "<job>.0.<rank>" from
// an MPI launcher's (PMIx, Open MPI, PMI), else "<host>.<pid>"; characters
// other than letters, digits, '-' and '_' become '_'.
std::string announcementName();

// The address of L that hosts on other machines can dial: as bound, but a
// wildcard bind (0.0.0.0, [::]) names this machine instead.
std::string reachableAddress(const Listener &L);

// Writes Dir/<announcementName()>.addr holding the reachable address of
// the first listener that is not the local socket, replacing a file of
// that name. Fails, saying why, when Dir is not a writable directory.
llvm::Error announceIn(llvm::StringRef Dir, const std::vector<Listener> &Listeners);

// Removes the file announceIn() wrote, if any. Async-signal-safe.
void withdrawAnnouncement();

} // namespace catalyst::remote::executor

#endif
