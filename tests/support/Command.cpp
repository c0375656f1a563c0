//===- Command.cpp - Running a program to completion from a test ----------===//

#include "Command.h"

#include "ChildEnvironment.h"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace catalyst::remote::test {

namespace {

using Clock = std::chrono::steady_clock;

// Reads Fd until end-of-file or the deadline.
void readAll(int Fd, std::string &Out, Clock::time_point Deadline) {
  char Buf[4096];
  for (;;) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    pollfd P{Fd, POLLIN, 0};
    if (Left.count() <= 0 || ::poll(&P, 1, int(Left.count())) <= 0)
      return;
    ssize_t N = ::read(Fd, Buf, sizeof(Buf));
    if (N <= 0)
      return;
    Out.append(Buf, size_t(N));
  }
}

} // namespace

CommandResult runCommand(const std::vector<std::string> &Argv, std::chrono::milliseconds Timeout,
                         const std::vector<std::string> &Env) {
  CommandResult R;
  int Fds[2];
  if (Argv.empty() || ::pipe2(Fds, O_CLOEXEC) != 0)
    return R;
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_addopen(&Actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&Actions, Fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&Actions, Fds[1], STDERR_FILENO);
  std::vector<std::string> ArgStrings = Argv, EnvStrings = tools::environmentWith(Env);
  auto Args = tools::pointersTo(ArgStrings), Envp = tools::pointersTo(EnvStrings);
  pid_t Pid;
  int Rc = posix_spawn(&Pid, Argv[0].c_str(), &Actions, nullptr, Args.data(), Envp.data());
  posix_spawn_file_actions_destroy(&Actions);
  ::close(Fds[1]);
  if (Rc != 0) {
    ::close(Fds[0]);
    return R;
  }
  auto Deadline = Clock::now() + Timeout;
  readAll(Fds[0], R.Output, Deadline);
  ::close(Fds[0]);
  int Status = 0;
  while (::waitpid(Pid, &Status, WNOHANG) == 0) {
    if (Clock::now() > Deadline) {
      ::kill(Pid, SIGKILL);
      ::waitpid(Pid, &Status, 0);
      return R;
    }
    ::usleep(1000);
  }
  if (WIFEXITED(Status))
    R.ExitStatus = WEXITSTATUS(Status);
  return R;
}

std::string findProgram(const std::string &Name) {
  std::string Path = std::getenv("PATH") ? std::getenv("PATH") : "";
  Path += ":/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin";
  size_t Start = 0;
  while (Start <= Path.size()) {
    size_t End = Path.find(':', Start);
    if (End == std::string::npos)
      End = Path.size();
    std::string Dir = Path.substr(Start, End - Start);
    std::string Candidate = (Dir.empty() ? "." : Dir) + "/" + Name;
    if (::access(Candidate.c_str(), X_OK) == 0)
      return Candidate;
    Start = End + 1;
  }
  return "";
}

} // namespace catalyst::remote::test
