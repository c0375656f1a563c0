//===- UpstreamExecutor.cpp - Either executor, started as Catalyst does ---===//

#include "UpstreamExecutor.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace upstream {

namespace {

using Clock = std::chrono::steady_clock;

// Catalyst's launcher waits 60 s; a loaded CI machine needs less.
constexpr auto ReadyTimeout = std::chrono::seconds(30);
// It tries the given port, then six more.
constexpr int PortAttempts = 7;

std::string executorPath() {
  return executorName() == "catalyst" ? CATALYST_EXECUTOR_BIN : OURS_EXECUTOR_PATH;
}

// A loopback port nothing listens on right now (it may be taken before the
// executor binds it; then it says so and another is tried).
int freePort() {
  int Fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(A);
  int Port = -1;
  if (Fd >= 0 && bind(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)) == 0 &&
      getsockname(Fd, reinterpret_cast<sockaddr *>(&A), &Len) == 0)
    Port = ntohs(A.sin_port);
  if (Fd >= 0)
    close(Fd);
  return Port;
}

std::vector<std::string> commandLine(const std::string &Address) {
  std::vector<std::string> Argv = {executorPath(), "--bind=" + Address,
                                   std::string("--plugin=") + TEST_PLUGIN_PATH,
                                   std::string("--plugin=") + UPSTREAM_PLUGIN_PATH};
  if (executorName() == "ours-upstream-only")
    Argv.push_back("--upstream-only");
  return Argv;
}

// TMPDIR, for this process and the executor, a directory of the build's
// per executor: Catalyst's executor stages assets under
// $TMPDIR/catalyst-assets, where upstream_plugin.c looks for them, and
// would otherwise leave that directory in /tmp.
std::string useOwnTmpdir() {
  std::string Dir = std::string(UPSTREAM_TMP_ROOT) + "/" + executorName();
  if (mkdir(UPSTREAM_TMP_ROOT, 0700) != 0 && errno != EEXIST)
    return std::string("cannot make " UPSTREAM_TMP_ROOT ": ") + std::strerror(errno);
  if (mkdir(Dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot make " + Dir + ": " + std::strerror(errno);
  setenv("TMPDIR", Dir.c_str(), 1);
  return {};
}

// Forks Argv[0] with stdout and stderr on WriteFd. The child gets SIGTERM
// when this test process dies, so a failed test leaves no executor behind.
pid_t spawn(const std::vector<std::string> &Argv, int WriteFd) {
  std::vector<char *> Ptrs;
  for (const std::string &A : Argv)
    Ptrs.push_back(const_cast<char *>(A.c_str()));
  Ptrs.push_back(nullptr);
  pid_t Parent = getpid();
  pid_t Pid = fork();
  if (Pid == 0) {
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != Parent ||
        dup2(WriteFd, STDOUT_FILENO) < 0 || dup2(WriteFd, STDERR_FILENO) < 0)
      _exit(127);
    execv(Ptrs[0], Ptrs.data());
    _exit(127);
  }
  return Pid;
}

// Reads Fd until Ready appears in a line, the child closes it, or the
// timeout; returns what was read. Ready is set when the line was seen.
std::string readUntil(int Fd, const std::string &Line, bool &Ready) {
  std::string Out;
  auto Deadline = Clock::now() + ReadyTimeout;
  Ready = false;
  while (!Ready) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now());
    if (Left.count() <= 0)
      break;
    pollfd P{Fd, POLLIN, 0};
    int N = poll(&P, 1, int(Left.count()));
    if (N < 0 && errno != EINTR)
      break;
    if (N <= 0)
      continue;
    char Buf[4096];
    ssize_t Got = read(Fd, Buf, sizeof(Buf));
    if (Got == 0 || (Got < 0 && errno != EINTR))
      break;
    if (Got > 0)
      Out.append(Buf, size_t(Got));
    size_t At = Out.find(Line);
    Ready = At != std::string::npos && Out.find('\n', At) != std::string::npos;
  }
  return Out;
}

void stopProcess(pid_t Pid) {
  kill(Pid, SIGTERM);
  // Catalyst's launcher waits 10 s before SIGKILL.
  auto Deadline = Clock::now() + std::chrono::seconds(10);
  while (waitpid(Pid, nullptr, WNOHANG) == 0) {
    if (Clock::now() > Deadline) {
      kill(Pid, SIGKILL);
      waitpid(Pid, nullptr, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

} // namespace

std::string kernelObject(const std::string &File) {
  return std::string(KERNEL_DIR) + "/" + File + ".o";
}

std::string executorName() {
  const char *Name = std::getenv("UPSTREAM_EXECUTOR");
  return Name && *Name ? Name : "ours";
}

std::unique_ptr<Executor> Executor::start(std::string &Error) {
  std::string Name = executorName();
  if (Name != "ours" && Name != "ours-upstream-only" && Name != "catalyst") {
    Error = "UPSTREAM_EXECUTOR is ours, ours-upstream-only or catalyst, not '" + Name + "'";
    return nullptr;
  }
  Error = useOwnTmpdir();
  if (!Error.empty())
    return nullptr;
  for (int Attempt = 0; Attempt < PortAttempts; ++Attempt) {
    std::string Address = "127.0.0.1:" + std::to_string(freePort());
    int Fds[2];
    if (pipe2(Fds, O_CLOEXEC) != 0) {
      Error = std::string("pipe: ") + std::strerror(errno);
      return nullptr;
    }
    pid_t Pid = spawn(commandLine(Address), Fds[1]);
    close(Fds[1]);
    bool Ready = false;
    std::string Out = Pid > 0 ? readUntil(Fds[0], "Listening on " + Address, Ready) : "";
    if (Ready) {
      std::fputs(Out.c_str(), stderr);
      std::unique_ptr<Executor> E(new Executor(Pid, Fds[0], Address));
      E->Forwarder = std::thread([E = E.get()] { E->forward(); });
      return E;
    }
    if (Pid > 0)
      stopProcess(Pid);
    close(Fds[0]);
    Error = executorPath() + " did not come up on " + Address + "; it printed: '" + Out + "'";
    // The launcher's cue to try another port.
    if (Out.find("Address already in use") == std::string::npos)
      return nullptr;
  }
  return nullptr;
}

Executor::Executor(pid_t Pid, int Out, std::string Address)
    : Pid(Pid), Out(Out), Address(std::move(Address)) {}

// Copies the executor's log to our stderr, where ctest keeps it. Polls with
// a timeout: Catalyst's connection processes, which outlive the executor
// until their host hangs up, keep the pipe open.
void Executor::forward() {
  while (!Stopping.load()) {
    pollfd P{Out, POLLIN, 0};
    if (poll(&P, 1, 100) <= 0)
      continue;
    char Buf[4096];
    ssize_t N = read(Out, Buf, sizeof(Buf));
    if (N == 0 || (N < 0 && errno != EINTR))
      return;
    if (N > 0)
      (void)!write(STDERR_FILENO, Buf, size_t(N));
  }
}

Executor::~Executor() {
  stopProcess(Pid);
  Stopping = true;
  Forwarder.join();
  close(Out);
}

} // namespace upstream
