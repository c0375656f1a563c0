//===- ServerProcess.cpp - A gRPC server the baseline starts itself -------===//

#include "ServerProcess.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace catalyst::remote::grpcbench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char *ListeningPrefix = "listening on ";

std::string sysError(const std::string &What, int Errno) {
  return What + ": " + std::strerror(Errno);
}

// A process starts on the CPUs of the thread that spawns it, and the gRPC
// server starts its threads at once: pinning it afterwards would leave them
// behind. So the calling thread moves to Cpu for the spawn and back.
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
      sched_setaffinity(0, sizeof(Saved), &Saved);
  }
  std::string Error;

private:
  cpu_set_t Saved;
  bool Moved = false;
};

// The child's stdout goes to WriteFd; everything else is inherited, so its
// diagnostics reach our stderr.
std::string spawn(const std::string &Path, int WriteFd, pid_t &Pid) {
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_adddup2(&Actions, WriteFd, STDOUT_FILENO);
  std::string Listen = "127.0.0.1:0";
  char *Argv[] = {const_cast<char *>(Path.c_str()), const_cast<char *>("--listen"), Listen.data(),
                  nullptr};
  int Rc = posix_spawn(&Pid, Path.c_str(), &Actions, nullptr, Argv, environ);
  posix_spawn_file_actions_destroy(&Actions);
  return Rc == 0 ? std::string() : sysError("cannot start " + Path, Rc);
}

std::string describeExit(int Status) {
  if (WIFEXITED(Status))
    return "exited with status " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return std::string("was killed by signal ") + strsignal(WTERMSIG(Status));
  return "stopped";
}

} // namespace

std::unique_ptr<ServerProcess> ServerProcess::start(const std::string &Path, int Cpu,
                                                    std::chrono::milliseconds Timeout,
                                                    std::string &Error) {
  int Fds[2];
  // Close-on-exec keeps the read end out of the child; dup2 clears the flag
  // on the child's copy of the write end.
  if (pipe2(Fds, O_CLOEXEC) != 0) {
    Error = sysError("pipe", errno);
    return nullptr;
  }
  pid_t Pid = -1;
  {
    OnCpu Placed(Cpu);
    Error = Placed.Error.empty() ? spawn(Path, Fds[1], Pid) : Placed.Error;
  }
  close(Fds[1]);
  if (!Error.empty()) {
    close(Fds[0]);
    return nullptr;
  }
  std::unique_ptr<ServerProcess> P(new ServerProcess(Pid, Fds[0]));
  Error = P->readAddress(Timeout);
  if (!Error.empty()) {
    Error = Path + ": " + Error;
    return nullptr;
  }
  return P;
}

std::string ServerProcess::readAddress(std::chrono::milliseconds Timeout) {
  auto Deadline = Clock::now() + Timeout;
  std::string Line;
  while (Line.find('\n') == std::string::npos) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    if (Left.count() <= 0)
      return "no 'listening on' line within " + std::to_string(Timeout.count()) + " ms";
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
      return describeExit(Status) + " before listening";
    }
    if (N > 0)
      Line.append(Buf, size_t(N));
  }
  Line.resize(Line.find('\n'));
  size_t At = Line.find(ListeningPrefix);
  if (At == std::string::npos)
    return "unexpected first line '" + Line + "'";
  Address = Line.substr(At + std::strlen(ListeningPrefix));
  return {};
}

ServerProcess::~ServerProcess() {
  if (Pid > 0 && getpid() == Owner) {
    kill(Pid, SIGTERM);
    auto Deadline = Clock::now() + std::chrono::seconds(5);
    int Status = 0;
    while (waitpid(Pid, &Status, WNOHANG) == 0) {
      if (Clock::now() > Deadline) {
        kill(Pid, SIGKILL);
        waitpid(Pid, &Status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  close(StdoutFd);
}

} // namespace catalyst::remote::grpcbench
