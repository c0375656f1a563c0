//===- ExecutorProcess.cpp - An executor the benchmark starts itself ------===//

#include "ExecutorProcess.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace llvm;
using Clock = std::chrono::steady_clock;

namespace catalyst::remote::bench {

namespace {

constexpr const char *ListeningPrefix = "listening on ";

Error sysError(const Twine &What, int Errno) {
  return createStringError(std::error_code(Errno, std::generic_category()),
                           What + ": " + std::strerror(Errno));
}

// Child's stdout goes to the pipe's write end; everything else is inherited,
// so the executor's diagnostics reach our stderr directly.
Expected<pid_t> spawnWithStdout(const std::string &Path, int WriteFd) {
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_adddup2(&Actions, WriteFd, STDOUT_FILENO);
  std::string Bind = "127.0.0.1:0";
  char *Argv[] = {const_cast<char *>(Path.c_str()), const_cast<char *>("--bind"), Bind.data(),
                  nullptr};
  pid_t Pid = -1;
  int Rc = posix_spawn(&Pid, Path.c_str(), &Actions, nullptr, Argv, environ);
  posix_spawn_file_actions_destroy(&Actions);
  if (Rc != 0)
    return sysError("cannot start " + Path, Rc);
  return Pid;
}

std::string describeExit(int Status) {
  if (WIFEXITED(Status))
    return "exited with status " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return std::string("was killed by signal ") + strsignal(WTERMSIG(Status));
  return "stopped";
}

} // namespace

Expected<std::unique_ptr<ExecutorProcess>>
ExecutorProcess::start(const std::string &Path, std::chrono::milliseconds Timeout) {
  int Fds[2];
  // Close-on-exec keeps the read end out of the child; dup2 clears the flag
  // on the child's copy of the write end.
  if (pipe2(Fds, O_CLOEXEC) != 0)
    return sysError("pipe", errno);
  auto Pid = spawnWithStdout(Path, Fds[1]);
  close(Fds[1]);
  if (!Pid) {
    close(Fds[0]);
    return Pid.takeError();
  }
  std::unique_ptr<ExecutorProcess> P(new ExecutorProcess(*Pid, Fds[0]));
  if (auto Err = P->readAddress(Timeout))
    return createStringError(inconvertibleErrorCode(), Path + ": " + toString(std::move(Err)));
  // Keep reading its stdout: a full pipe would block the executor, a closed
  // one would kill it with SIGPIPE.
  P->Forwarder = std::thread([P = P.get()] { P->forwardRestOfStdout(); });
  return P;
}

Error ExecutorProcess::readAddress(std::chrono::milliseconds Timeout) {
  auto Deadline = Clock::now() + Timeout;
  std::string Line;
  while (Line.find('\n') == std::string::npos) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    if (Left.count() <= 0)
      return createStringError(inconvertibleErrorCode(), "no 'listening on' line within %lld ms",
                               (long long)Timeout.count());
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
      return createStringError(inconvertibleErrorCode(), "%s before listening",
                               describeExit(Status).c_str());
    }
    if (N > 0)
      Line.append(Buf, size_t(N));
  }
  size_t End = Line.find('\n');
  Pending = Line.substr(End + 1);
  Line.resize(End);
  size_t At = Line.find(ListeningPrefix);
  if (At == std::string::npos)
    return createStringError(inconvertibleErrorCode(), "unexpected first line '%s'", Line.c_str());
  Address = Line.substr(At + std::strlen(ListeningPrefix));
  return Error::success();
}

void ExecutorProcess::forwardRestOfStdout() {
  if (!Pending.empty())
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
      (void)!write(STDERR_FILENO, Buf, size_t(N));
  }
}

void ExecutorProcess::stop() {
  if (Pid <= 0)
    return;
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
  Pid = -1;
}

ExecutorProcess::~ExecutorProcess() {
  stop();
  Stopping = true;
  if (Forwarder.joinable())
    Forwarder.join();
  close(StdoutFd);
}

} // namespace catalyst::remote::bench
