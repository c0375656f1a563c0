//===- Command.cpp - Running a program to completion from a test ----------===//

#include "Command.h"

#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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

CommandResult runCommand(const std::vector<std::string> &Argv, std::chrono::milliseconds Timeout) {
  CommandResult R;
  int Fds[2];
  if (Argv.empty() || ::pipe2(Fds, O_CLOEXEC) != 0)
    return R;
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_addopen(&Actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&Actions, Fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&Actions, Fds[1], STDERR_FILENO);
  std::vector<char *> Args;
  for (const std::string &A : Argv)
    Args.push_back(const_cast<char *>(A.c_str()));
  Args.push_back(nullptr);
  pid_t Pid;
  int Rc = posix_spawn(&Pid, Argv[0].c_str(), &Actions, nullptr, Args.data(), environ);
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

} // namespace catalyst::remote::test
