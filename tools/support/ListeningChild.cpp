//===- ListeningChild.cpp - A server process started for a harness --------===//

#include "ListeningChild.h"

#include "ChildEnvironment.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace catalyst::remote::tools {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char *ListeningOn = "listening on ";

std::string sysError(const std::string &What, int Errno) {
  return What + ": " + std::strerror(Errno);
}

std::string describeExit(int Status) {
  if (WIFEXITED(Status))
    return "exited with status " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return std::string("was killed by ") + strsignal(WTERMSIG(Status));
  return "stopped";
}

// A process starts on the CPUs of the thread that spawns it, so the calling
// thread moves to Cpu for the spawn and back.
class OnCpu {
public:
  explicit OnCpu(int Cpu) {
    if (Cpu < 0)
      return;
    if (sched_getaffinity(0, sizeof(Saved), &Saved) != 0) {
      Error = sysError("cannot read this thread's CPUs", errno);
      return;
    }
    cpu_set_t One;
    CPU_ZERO(&One);
    CPU_SET(Cpu, &One);
    if (sched_setaffinity(0, sizeof(One), &One) != 0)
      Error = sysError("cannot run on CPU " + std::to_string(Cpu), errno);
    else
      Moved = true;
  }
  ~OnCpu() {
    if (Moved)
      // The CPUs it ran on a moment ago: a destructor has no one to tell if
      // they are refused now, and the thread runs on, pinned.
      sched_setaffinity(0, sizeof(Saved), &Saved);
  }
  std::string Error;

private:
  cpu_set_t Saved;
  bool Moved = false;
};

// In the forked child, before exec: only async-signal-safe calls. The
// child is sent SIGTERM when the thread that started it ends, so a harness
// that dies (a failed assertion that aborts, a sanitizer report) does not
// leave a server behind holding its output pipes open.
[[noreturn]] void execChild(const char *Path, char *const *Argv, char *const *Envp, int WriteFd,
                            const char *StderrPath, pid_t Parent) {
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != Parent)
    ::_exit(127);
  if (::dup2(WriteFd, STDOUT_FILENO) < 0)
    ::_exit(127);
  if (StderrPath) {
    int Fd = ::open(StderrPath, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (Fd < 0 || ::dup2(Fd, STDERR_FILENO) < 0)
      ::_exit(127);
  }
  ::execve(Path, Argv, Envp);
  ::_exit(127);
}

// The child's stdout goes to WriteFd; stderr is inherited, so its
// diagnostics reach ours, unless the spec names a file for it.
std::string spawn(const ChildSpec &Spec, int WriteFd, pid_t &Pid) {
  if (Spec.Argv.empty())
    return "no program to start";
  const std::string &Path = Spec.Argv[0];
  if (::access(Path.c_str(), X_OK) != 0)
    return sysError("cannot execute " + Path, errno);
  OnCpu Placed(Spec.Cpu);
  if (!Placed.Error.empty())
    return Placed.Error;
  std::vector<std::string> Args = Spec.Argv, Env = environmentWith(Spec.Env);
  auto Argv = pointersTo(Args), Envp = pointersTo(Env);
  const char *StderrPath = Spec.StderrPath.empty() ? nullptr : Spec.StderrPath.c_str();
  pid_t Parent = ::getpid();
  Pid = ::fork();
  if (Pid == 0)
    execChild(Path.c_str(), Argv.data(), Envp.data(), WriteFd, StderrPath, Parent);
  return Pid > 0 ? std::string() : sysError("cannot start " + Path, errno);
}

} // namespace

ListeningChild::ListeningChild(pid_t Pid, int StdoutFd)
    : Pid(Pid), Owner(getpid()), StdoutFd(StdoutFd) {}

std::unique_ptr<ListeningChild> ListeningChild::start(const ChildSpec &Spec, std::string &Error) {
  int Fds[2];
  // Close-on-exec keeps the read end out of the child; dup2 clears the flag
  // on the child's copy of the write end.
  if (pipe2(Fds, O_CLOEXEC) != 0) {
    Error = sysError("pipe", errno);
    return nullptr;
  }
  pid_t Pid = -1;
  Error = spawn(Spec, Fds[1], Pid);
  close(Fds[1]);
  if (!Error.empty()) {
    close(Fds[0]);
    return nullptr;
  }
  std::unique_ptr<ListeningChild> C(new ListeningChild(Pid, Fds[0]));
  Error = C->readAddress(Spec.Timeout);
  if (!Error.empty()) {
    Error = Spec.Argv[0] + ": " + Error;
    return nullptr;
  }
  if (Spec.ForwardStdout)
    C->Forwarder = std::thread([C = C.get()] { C->forward(); });
  return C;
}

std::string ListeningChild::readAddress(std::chrono::milliseconds Timeout) {
  auto Deadline = Clock::now() + Timeout;
  std::string Out;
  while (Out.find('\n') == std::string::npos) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    if (Left.count() <= 0)
      return "no '" + std::string(ListeningOn) + "' line within " +
             std::to_string(Timeout.count()) + " ms; its stdout so far: '" + Out + "'";
    pollfd P{StdoutFd, POLLIN, 0};
    int Ready = poll(&P, 1, int(Left.count()));
    if (Ready < 0 && errno != EINTR)
      return sysError("poll", errno);
    if (Ready <= 0)
      continue;
    char Buf[512];
    ssize_t N = read(StdoutFd, Buf, sizeof(Buf));
    if (N < 0 && errno != EINTR)
      return sysError("read", errno);
    if (N == 0) {
      int Status = 0;
      waitpid(Pid, &Status, 0);
      Pid = -1;
      return describeExit(Status) + " before printing where it listens";
    }
    if (N > 0)
      Out.append(Buf, size_t(N));
  }
  size_t End = Out.find('\n');
  Pending = Out.substr(End + 1);
  Out.resize(End);
  size_t At = Out.find(ListeningOn);
  if (At == std::string::npos)
    return "unexpected first line '" + Out + "'";
  Address = Out.substr(At + std::strlen(ListeningOn));
  return {};
}

void ListeningChild::forward() {
  if (!Pending.empty())
    // The child's output, forwarded: a stderr that cannot take it has no one
    // else to tell.
    (void)!write(STDERR_FILENO, Pending.data(), Pending.size());
  // Polls with a timeout so stop() can end this thread even while a
  // grandchild still holds the pipe open.
  while (!Stopping.load()) {
    pollfd P{StdoutFd, POLLIN, 0};
    if (poll(&P, 1, 100) <= 0)
      continue;
    char Buf[4096];
    ssize_t N = read(StdoutFd, Buf, sizeof(Buf));
    if (N == 0 || (N < 0 && errno != EINTR))
      return;
    if (N > 0)
      // As above.
      (void)!write(STDERR_FILENO, Buf, size_t(N));
  }
}

bool ListeningChild::stop(std::chrono::milliseconds Grace) {
  if (Pid <= 0 || getpid() != Owner)
    return true;
  bool Clean = true;
  // Fails only for a child already reaped, for which waitpid() returns at once.
  kill(Pid, SIGTERM);
  auto Deadline = Clock::now() + Grace;
  while (waitpid(Pid, nullptr, WNOHANG) == 0) {
    if (Clock::now() > Deadline) {
      Clean = false;
      // As above.
      kill(Pid, SIGKILL);
      waitpid(Pid, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Pid = -1;
  return Clean;
}

ListeningChild::~ListeningChild() {
  stop();
  Stopping = true;
  // A forked copy has the thread object but not the thread.
  if (Forwarder.joinable())
    getpid() == Owner ? Forwarder.join() : Forwarder.detach();
  close(StdoutFd);
}

} // namespace catalyst::remote::tools
