//===- BackgroundCommand.cpp - A program a test runs beside itself --------===//

#include "BackgroundCommand.h"

#include "ChildEnvironment.h"
#include "Procfs.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace catalyst::remote::test {

BackgroundCommand::~BackgroundCommand() {
  if (running())
    stop();
}

::testing::AssertionResult BackgroundCommand::start(const std::vector<std::string> &Argv,
                                                    const std::string &Output,
                                                    const std::vector<std::string> &Env) {
  if (Argv.empty() || running())
    return ::testing::AssertionFailure() << "nothing to start, or already started";
  OutputPath = Output;
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_addopen(&Actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&Actions, STDOUT_FILENO, OutputPath.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&Actions, STDOUT_FILENO, STDERR_FILENO);
  // A group of its own (the child's pid names it), so that signal() reaches
  // what it forks here and never the test.
  posix_spawnattr_t Attr;
  posix_spawnattr_init(&Attr);
  posix_spawnattr_setflags(&Attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&Attr, 0);
  std::vector<std::string> Args = Argv, EnvStrings = tools::environmentWith(Env);
  auto ArgPtrs = tools::pointersTo(Args), EnvPtrs = tools::pointersTo(EnvStrings);
  int Rc = posix_spawn(&Pid, Argv[0].c_str(), &Actions, &Attr, ArgPtrs.data(), EnvPtrs.data());
  posix_spawnattr_destroy(&Attr);
  posix_spawn_file_actions_destroy(&Actions);
  if (Rc != 0) {
    Pid = -1;
    return ::testing::AssertionFailure() << "cannot start " << Argv[0] << ": " << std::strerror(Rc);
  }
  Reaped = false;
  return ::testing::AssertionSuccess();
}

bool BackgroundCommand::signal(int Signal) {
  return running() && ::kill(-Pid, Signal) == 0;
}

bool BackgroundCommand::wait(std::chrono::milliseconds Timeout) {
  if (!running())
    return Pid > 0;
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  for (;;) {
    pid_t R = ::waitpid(Pid, &Status, WNOHANG);
    if (R == Pid || (R < 0 && errno == ECHILD)) {
      Reaped = true;
      return true;
    }
    if (std::chrono::steady_clock::now() > Deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool BackgroundCommand::stop(std::chrono::milliseconds Grace) {
  if (!running())
    return true;
  signal(SIGTERM);
  if (wait(Grace))
    return true;
  signal(SIGKILL);
  wait(std::chrono::seconds(10));
  return false;
}

std::string BackgroundCommand::status() const {
  if (!Reaped)
    return "";
  if (WIFEXITED(Status))
    return "exited with status " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return std::string("was killed by ") + strsignal(WTERMSIG(Status));
  return "stopped";
}

int BackgroundCommand::exitStatus() const {
  return Reaped && WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

std::string BackgroundCommand::output() const {
  return OutputPath.empty() ? "" : readFile(OutputPath);
}

} // namespace catalyst::remote::test
