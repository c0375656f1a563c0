//===- Announcement.cpp - Telling hosts where this executor listens -------===//

#include "Announcement.h"

#include "wire/AnnouncementLock.h"
#include "wire/SysError.h"
#include "wire/WriteAll.h"

#include "llvm/ADT/StringExtras.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::executor {

namespace {

// Where the announcement is, for the signal handler, and where it is
// written before it is renamed there: both set before the rename and read
// only once Published says so; cleared by the first withdrawal, so that a
// later one cannot remove a rerun's file. A withdrawal removes the file
// under either name: one that comes before the rename makes it fail, so
// the file is never put in place after a stop.
char Announced[PATH_MAX];
char Pending[PATH_MAX];
volatile sig_atomic_t Published = 0;

std::string variable(const char *Name) {
  const char *V = std::getenv(Name);
  return V ? V : "";
}

// A file-name component from text the environment gave.
std::string component(StringRef Text) {
  std::string Out;
  for (char C : Text.take_front(64))
    Out += isAlnum(C) || C == '-' || C == '_' ? C : '_';
  return Out.empty() ? "_" : Out;
}

std::string hostName() {
  char Host[256] = {};
  if (::gethostname(Host, sizeof(Host) - 1) != 0 || !Host[0])
    return "localhost";
  return Host;
}

} // namespace

std::string announcementName() {
  std::string Job = variable("SLURM_JOB_ID"), Rank = variable("SLURM_PROCID");
  if (!Job.empty() && !Rank.empty()) {
    std::string Step = variable("SLURM_STEP_ID");
    return component(Job) + "." + component(Step.empty() ? "0" : Step) + "." + component(Rank);
  }
  for (const char *Name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    Rank = variable(Name);
    if (Rank.empty())
      continue;
    Job = variable("PMIX_NAMESPACE");
    if (Job.empty())
      Job = variable("OMPI_MCA_ess_base_jobid");
    return component(Job.empty() ? "mpi" : Job) + ".0." + component(Rank);
  }
  return component(hostName()) + "." + std::to_string(::getpid());
}

std::string reachableAddress(const Listener &L) {
  StringRef A = L.Address;
  for (StringRef Wildcard : {"0.0.0.0:", "[::]:"})
    if (A.starts_with(Wildcard))
      return hostName() + ":" + A.drop_front(Wildcard.size()).str();
  return L.Address;
}

Error announceIn(StringRef Dir, const std::vector<Listener> &Listeners) {
  if (Listeners.empty())
    return createStringError(inconvertibleErrorCode(), "--announce: nothing to announce");
  std::string Name = announcementName();
  std::string Final = (Dir + "/" + Name + ".addr").str();
  std::string Temp = (Dir + "/." + Name + ".addr." + Twine(::getpid())).str();
  if (Temp.size() >= sizeof(Pending))
    return createStringError(inconvertibleErrorCode(), "--announce: path too long: %s",
                             Temp.c_str());
  int Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (Fd < 0)
    return wire::sysError("--announce: cannot create " + Temp, errno);
  std::string Text = wire::announcementText(reachableAddress(Listeners.front()));
  Error Err = Error::success();
  if (std::error_code EC = wire::writeAll(Fd, Text))
    Err = wire::sysError("--announce: cannot write " + Temp, EC.value());
  else if (int Errno = wire::holdAnnouncement(Fd))
    Err = wire::sysError("--announce: cannot lock " + Temp, Errno);
  // Not closed unless it failed: the lock lives as long as the descriptor,
  // which this process and its connection processes hold until they end.
  if (Err)
    ::close(Fd);
  std::memcpy(Announced, Final.c_str(), Final.size() + 1);
  std::memcpy(Pending, Temp.c_str(), Temp.size() + 1);
  Published = 1;
  if (!Err && ::rename(Temp.c_str(), Final.c_str()) != 0) {
    // A stop withdrew it first, removing the file to rename: the executor
    // is going, and has nothing to announce.
    if (!Published)
      return Error::success();
    Err = wire::sysError("--announce: cannot rename " + Temp + " to " + Final, errno);
  }
  if (Err) {
    Published = 0;
    // Err says why; a temporary file left has a name no reader looks for.
    ::unlink(Temp.c_str());
  }
  return Err;
}

void withdrawAnnouncement() {
  if (!Published)
    return;
  Published = 0;
  ::unlink(Pending);
  // Async-signal-safe, with nothing to report to: a reader that finds the file
  // anyway fails to connect to it.
  ::unlink(Announced);
}

} // namespace catalyst::remote::executor
