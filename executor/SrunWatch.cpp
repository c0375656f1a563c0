//===- SrunWatch.cpp - Ending with the srun that started the step ---------===//

#include "SrunWatch.h"

#include "Log.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace catalyst::remote::executor {
namespace {

// How long endStep() waits for scancel: Slurm's controller answers in
// milliseconds; one that does not must not hold up the stop.
constexpr std::chrono::seconds ScancelWait{2};

// At most this much of a /proc file is read: /proc/net/tcp of a busy node
// is large, but not this large.
constexpr size_t ProcFileLimit = size_t(64) << 20;

std::string readProcFile(const std::string &Path) {
  std::ifstream In(Path);
  std::string Text;
  char Buffer[65536];
  while (In && Text.size() < ProcFileLimit) {
    In.read(Buffer, sizeof(Buffer));
    Text.append(Buffer, size_t(In.gcount()));
  }
  return Text;
}

bool namedSrun(pid_t Pid) {
  return llvm::StringRef(readProcFile("/proc/" + std::to_string(Pid) + "/comm")).rtrim() == "srun";
}

bool holdsSocket(pid_t Pid, const std::vector<uint64_t> &Inodes) {
  std::string Dir = "/proc/" + std::to_string(Pid) + "/fd";
  DIR *D = ::opendir(Dir.c_str());
  if (!D)
    return false;
  bool Holds = false;
  while (dirent *E = ::readdir(D)) {
    char Link[64];
    ssize_t N = ::readlink((Dir + "/" + E->d_name).c_str(), Link, sizeof(Link));
    uint64_t Inode = 0;
    llvm::StringRef Target(Link, N > 0 ? size_t(N) : 0);
    if (Target.consume_front("socket:[") && Target.consume_back("]") &&
        !Target.getAsInteger(10, Inode) && llvm::is_contained(Inodes, Inode)) {
      Holds = true;
      break;
    }
  }
  ::closedir(D);
  return Holds;
}

pid_t parentOf(pid_t Pid) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  std::string Stat = readProcFile("/proc/" + std::to_string(Pid) + "/stat");
  size_t Close = Stat.rfind(')');
  std::istringstream In(Close == std::string::npos ? "" : Stat.substr(Close + 1));
  std::string State;
  pid_t Parent = 0;
  In >> State >> Parent;
  return Parent;
}

// The processes named srun that hold one of Inodes. srun may have forked
// a helper that inherited the socket; the one whose parent is not among
// them is srun itself.
pid_t srunHolding(const std::vector<uint64_t> &Inodes) {
  std::vector<pid_t> Holders;
  DIR *Proc = ::opendir("/proc");
  if (!Proc)
    return 0;
  while (dirent *E = ::readdir(Proc)) {
    pid_t Pid = 0;
    if (!llvm::StringRef(E->d_name).getAsInteger(10, Pid) && Pid > 0 && namedSrun(Pid) &&
        holdsSocket(Pid, Inodes))
      Holders.push_back(Pid);
  }
  ::closedir(Proc);
  for (pid_t Pid : Holders)
    if (!llvm::is_contained(Holders, parentOf(Pid)))
      return Pid;
  return 0;
}

// "<job>.<step>" of this process's step, or empty outside one.
std::string stepName() {
  const char *Job = std::getenv("SLURM_JOB_ID");
  const char *Step = std::getenv("SLURM_STEP_ID");
  return Job && Step && *Job && *Step ? std::string(Job) + "." + Step : std::string();
}

} // namespace

std::vector<uint64_t> listeningInodes(const std::string &ProcNetTcp, uint16_t Port) {
  std::vector<uint64_t> Inodes;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  llvm::StringRef(ProcNetTcp).split(Lines, '\n', -1, false);
  for (llvm::StringRef Line : Lines) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    llvm::SmallVector<llvm::StringRef, 12> F;
    llvm::SplitString(Line, F);
    unsigned LocalPort = 0;
    uint64_t Inode = 0;
    if (F.size() < 10 || F[3] != "0A" || F[1].rsplit(':').second.getAsInteger(16, LocalPort) ||
        LocalPort != Port || F[9].getAsInteger(10, Inode) || Inode == 0)
      continue;
    Inodes.push_back(Inode);
  }
  return Inodes;
}

SrunWatch SrunWatch::find() {
  SrunWatch W;
  const char *PortText = std::getenv("SLURM_SRUN_COMM_PORT");
  unsigned Port = 0;
  if (!PortText || llvm::StringRef(PortText).getAsInteger(10, Port) || Port == 0 || Port > 65535)
    return W;
  std::vector<uint64_t> Inodes = listeningInodes(readProcFile("/proc/net/tcp"), uint16_t(Port));
  for (uint64_t I : listeningInodes(readProcFile("/proc/net/tcp6"), uint16_t(Port)))
    Inodes.push_back(I);
  if (Inodes.empty())
    return W;
  W.Srun = srunHolding(Inodes);
  if (W.Srun > 0)
    W.Fd = PidFd::open(W.Srun);
  // Its pid may have been taken by another process since it was found.
  if (W.Srun > 0 && !namedSrun(W.Srun))
    return SrunWatch();
  return W;
}

int SrunWatch::pollTimeoutMs() const {
  return watching() && !Fd.valid() ? int(WithoutPidfd.count()) : -1;
}

bool SrunWatch::gone() const {
  if (!watching())
    return false;
  if (Fd.valid())
    return Fd.ended();
  // Without a pidfd srun is looked up by pid: one reused by then ends the
  // watch late, never early.
  return ::kill(Srun, 0) != 0 && errno == ESRCH;
}

void SrunWatch::endStep() const {
  std::string Step = stepName();
  if (Step.empty())
    return;
  std::string Signal = "--signal=TERM";
  std::string Quiet = "--quiet";
  std::string Scancel = "scancel";
  char *Argv[] = {Scancel.data(), Signal.data(), Quiet.data(), Step.data(), nullptr};
  // The listener blocks its signals outside its wait; scancel starts with
  // none blocked.
  posix_spawnattr_t Attr;
  sigset_t None;
  sigemptyset(&None);
  int Err = ::posix_spawnattr_init(&Attr);
  bool Made = !Err;
  if (!Err)
    Err = ::posix_spawnattr_setsigmask(&Attr, &None);
  if (!Err)
    Err = ::posix_spawnattr_setflags(&Attr, POSIX_SPAWN_SETSIGMASK);
  pid_t Pid = 0;
  if (!Err)
    Err = ::posix_spawnp(&Pid, "scancel", nullptr, &Attr, Argv, environ);
  // Cannot fail: an initialised attribute object.
  if (Made)
    ::posix_spawnattr_destroy(&Attr);
  if (Err) {
    LogLine() << "catalyst-remote-executor: cannot run scancel to end step " << Step << ": "
              << ::strerror(Err) << "; its executors on other machines end with the job";
    return;
  }
  auto Deadline = std::chrono::steady_clock::now() + ScancelWait;
  int Status = 0;
  pid_t Got;
  while ((Got = ::waitpid(Pid, &Status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (Got == 0) {
    LogLine() << "catalyst-remote-executor: scancel for step " << Step << " has not returned in "
              << ScancelWait.count() << " s: killing it";
    // Fails only for a process already gone, which the wait then reaps.
    ::kill(Pid, SIGKILL);
    ::waitpid(Pid, &Status, 0);
  } else if (Got == Pid && (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)) {
    LogLine() << "catalyst-remote-executor: scancel for step " << Step
              << " failed; its executors on other machines end with the job";
  }
}

} // namespace catalyst::remote::executor
