//===- SocketFileTest.cpp - Executors at unix:PATH ------------------------===//
//
// An executor listens at a socket file of mode 0600 in a directory only its
// user may write to, replaces a stale socket there and nothing else, and
// removes its file when it stops. Sessions there work as over TCP, token
// included; a host relayed to it from elsewhere (ssh -L, played by a
// SocketRelay) is served as one over TCP, and a host on the executor's
// machine still moves to shared memory through the offer. Each end talks
// only to processes of its own user.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "SocketRelay.h"
#include "TempDir.h"
#include "Text.h"
#include "TokenFile.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

constexpr uid_t Nobody = 65534;

ExecutorOptions at(const std::string &Path, std::vector<std::string> Args = {}) {
  ExecutorOptions O;
  O.Bind = "unix:" + Path;
  O.Args = std::move(Args);
  return O;
}

CommandResult runExecutorAt(const std::string &Path, std::vector<std::string> More = {}) {
  std::vector<std::string> Argv = {executorPath(), "--bind", "unix:" + Path};
  Argv.insert(Argv.end(), More.begin(), More.end());
  return runCommand(Argv);
}

sockaddr_un addressOf(const std::string &Path) {
  sockaddr_un A{};
  A.sun_family = AF_UNIX;
  std::strncpy(A.sun_path, Path.c_str(), sizeof(A.sun_path) - 1);
  return A;
}

// A socket bound at Path; listening when asked, else stale once closed.
int socketAt(const std::string &Path, bool Listen) {
  sockaddr_un A = addressOf(Path);
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(::bind(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0) << std::strerror(errno);
  if (Listen) {
    EXPECT_EQ(::listen(Fd, 4), 0);
  }
  return Fd;
}

// 0 when a connection to Path succeeds, else the errno value.
int connectError(const std::string &Path) {
  sockaddr_un A = addressOf(Path);
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int Err = ::connect(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)) == 0 ? 0 : errno;
  ::close(Fd);
  return Err;
}

// Runs Body in a child process as uid and gid 65534; its exit status.
template <typename Fn> int asNobody(Fn Body) {
  pid_t Pid = ::fork();
  if (Pid == 0) {
    if (::setgid(Nobody) != 0 || ::setuid(Nobody) != 0)
      ::_exit(100);
    ::_exit(Body());
  }
  int Status = 0;
  ::waitpid(Pid, &Status, 0);
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

// What the peer on Fd sends until it closes the connection, or until
// Timeout passes.
std::string readUntilClosed(int Fd, std::chrono::milliseconds Timeout) {
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  std::string Got;
  char Buf[4096];
  for (;;) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
        Deadline - std::chrono::steady_clock::now());
    pollfd P{Fd, POLLIN, 0};
    if (Left.count() <= 0 || ::poll(&P, 1, int(Left.count())) <= 0)
      return Got + "\n(nothing more within the time limit)";
    ssize_t N = ::read(Fd, Buf, sizeof(Buf));
    if (N <= 0)
      return Got;
    Got.append(Buf, size_t(N));
  }
}

bool exists(const std::string &Path) {
  struct stat St;
  return ::lstat(Path.c_str(), &St) == 0;
}

// A launch of concat over a session opened at Address with O as it is, in
// every run of the engine tests (not forThisRun).
void launchesAt(const std::string &Address, SessionOptions O, TransportKind Expected) {
  O.Strategy = Strategy::ZeroCopy;
  auto S = Session::open(Address, O);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ((*S)->transport(), Expected);
  ASSERT_EQ(messageOf((*S)->sendBinary(kernelObject("concat"), BinaryFormat::Object)), "");
  std::mt19937_64 Rng(7);
  auto Ins = byteInputs({1000, 70000}, Rng);
  EXPECT_TRUE(concatMatches(**S, Ins));
}

SessionOptions overStream() {
  SessionOptions O;
  O.Transport = TransportKind::Tcp;
  return O;
}

TEST(SocketFileTest, ListensAtASocketOnlyItsUserMayReach) {
  TempDir Dir;
  // Others may pass through the directory: only the socket's mode stops them.
  ASSERT_EQ(::chmod(Dir.dir().c_str(), 0755), 0);
  std::string Path = Dir.path("exec.sock");
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(at(Path)));
  EXPECT_EQ(Exec.address(), "unix:" + Path);
  struct stat St;
  ASSERT_EQ(::lstat(Path.c_str(), &St), 0);
  EXPECT_TRUE(S_ISSOCK(St.st_mode));
  EXPECT_EQ(St.st_mode & 07777, 0600u);
  EXPECT_EQ(St.st_uid, ::geteuid());
  launchesAt(Exec.address(), overStream(), TransportKind::SocketFile);
  if (::geteuid() != 0)
    return; // another user to try it needs root
  EXPECT_EQ(asNobody([&] { return connectError(Path); }), EACCES);
}

TEST(SocketFileTest, ADirectoryOthersMayWriteIsRefused) {
  TempDir Dir;
  std::string Path = Dir.path("exec.sock");
  for (mode_t Mode : {0777, 01777, 0770}) {
    ASSERT_EQ(::chmod(Dir.dir().c_str(), Mode), 0);
    CommandResult R = runExecutorAt(Path);
    std::string Shown = "mode 0" + [&] {
      char B[8];
      std::snprintf(B, sizeof(B), "%o", unsigned(Mode));
      return std::string(B);
    }();
    EXPECT_EQ(R.ExitStatus, 1) << R.Output;
    EXPECT_TRUE(mentions(R.Output, "cannot listen on unix:" + Path)) << R.Output;
    EXPECT_TRUE(mentions(R.Output, "writable by group or others (" + Shown + ")")) << R.Output;
    EXPECT_FALSE(mentions(R.Output, "listening on")) << R.Output;
    EXPECT_FALSE(exists(Path));
  }
}

TEST(SocketFileTest, AStaleSocketIsReplaced) {
  TempDir Dir;
  std::string Path = Dir.path("exec.sock");
  ::close(socketAt(Path, /*Listen=*/false)); // as a killed executor leaves it
  ASSERT_EQ(connectError(Path), ECONNREFUSED);
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(at(Path)));
  launchesAt(Exec.address(), overStream(), TransportKind::SocketFile);
}

TEST(SocketFileTest, ALiveSocketIsLeftAlone) {
  TempDir Dir;
  std::string Path = Dir.path("exec.sock");
  int Live = socketAt(Path, /*Listen=*/true);
  CommandResult R = runExecutorAt(Path);
  EXPECT_EQ(R.ExitStatus, 1) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "another process listens on it")) << R.Output;
  // Its listener still gets the connections.
  EXPECT_EQ(connectError(Path), 0);
  int Accepted = ::accept(Live, nullptr, nullptr);
  EXPECT_GE(Accepted, 0);
  ::close(Accepted);
  ::close(Live);
}

TEST(SocketFileTest, AFileThatIsNoSocketIsLeftAlone) {
  TempDir Dir;
  std::string Path = Dir.path("exec.sock");
  std::ofstream(Path) << "keep";
  CommandResult R = runExecutorAt(Path);
  EXPECT_EQ(R.ExitStatus, 1) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "exists and is not a socket")) << R.Output;
  std::string Kept;
  std::ifstream(Path) >> Kept;
  EXPECT_EQ(Kept, "keep");
}

TEST(SocketFileTest, TheFileGoesWhenTheExecutorStops) {
  TempDir Dir;
  std::string Path = Dir.path("exec.sock");
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(at(Path)));
  ASSERT_TRUE(exists(Path));
  EXPECT_TRUE(Exec.stop()); // SIGTERM, and waits for the exit
  EXPECT_FALSE(exists(Path));
}

TEST(SocketFileTest, TheFileGoesWhenALaterBindFails) {
  TempDir Dir;
  std::string Path = Dir.path("exec.sock");
  LoopbackSocket Taken(/*Listen=*/true);
  CommandResult R = runExecutorAt(Path, {"--bind", Taken.address()});
  EXPECT_EQ(R.ExitStatus, 1) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "Address already in use")) << R.Output;
  EXPECT_FALSE(exists(Path));
}

TEST(SocketFileTest, ATokenWorksThereAsOverTcp) {
  TokenFile Token;
  TempDir Dir;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(at(Dir.path("exec.sock"), {"--token-file", Token.path()})));
  SessionOptions O = overStream();
  O.Secret = SecretBytes::copyOf(Token.secret());
  launchesAt(Exec.address(), O, TransportKind::SocketFile);
  O.Secret = SecretBytes::copyOf(std::string(64, '0'));
  auto Wrong = Session::open(Exec.address(), O);
  ASSERT_FALSE(Wrong);
  EXPECT_TRUE(mentions(llvm::toString(Wrong.takeError()), "authentication failed"));
}

// The executor cannot tell a host on its machine from one ssh relays: it
// offers its local socket to both, and a host that is local takes it.
TEST(SocketFileTest, AHostOnThisMachineMovesToSharedMemory) {
  TempDir Dir;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(at(Dir.path("exec.sock"))));
  launchesAt(Exec.address(), {}, TransportKind::Local);
}

TEST(SocketFileTest, AHostRelayedToTheSocketIsServedAsOverTcp) {
  TempDir Dir;
  std::string Path = Dir.path("exec.sock");
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(at(Path)));
  SocketRelay Relay(Path);
  launchesAt(Relay.address(), overStream(), TransportKind::Tcp);
  EXPECT_EQ(Relay.relayed(), 1u);
  // Relayed from this machine after all: the offer leads here too.
  SessionOptions Shm;
  Shm.Transport = TransportKind::Local;
  launchesAt(Relay.address(), Shm, TransportKind::Local);
  EXPECT_EQ(Relay.relayed(), 2u);
}

TEST(SocketFileTest, AHostTalksOnlyToItsOwnUser) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "a listener of another user needs root";
  TempDir Dir;
  ASSERT_EQ(::chown(Dir.dir().c_str(), Nobody, Nobody), 0) << std::strerror(errno);
  std::string Path = Dir.path("exec.sock");
  int Ready[2];
  ASSERT_EQ(::pipe(Ready), 0);
  pid_t Pid = ::fork();
  if (Pid == 0) {
    if (::setgid(Nobody) != 0 || ::setuid(Nobody) != 0)
      ::_exit(100);
    socketAt(Path, /*Listen=*/true);
    [[maybe_unused]] ssize_t N = ::write(Ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char C;
  ::close(Ready[1]);
  ASSERT_EQ(::read(Ready[0], &C, 1), 1);
  ::close(Ready[0]);
  SessionOptions O = overStream();
  O.HandshakeTimeout = 2s;
  auto S = Session::open("unix:" + Path, O);
  ::kill(Pid, SIGKILL);
  ::waitpid(Pid, nullptr, 0);
  ASSERT_FALSE(S);
  std::string Msg = llvm::toString(S.takeError());
  EXPECT_TRUE(mentions(Msg, "cannot connect to unix:" + Path)) << Msg;
  EXPECT_TRUE(mentions(Msg, "runs as uid 65534")) << Msg;
}

TEST(SocketFileTest, AnExecutorServesOnlyItsOwnUser) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "an executor of another user needs root";
  TempDir Dir;
  ASSERT_EQ(::chown(Dir.dir().c_str(), Nobody, Nobody), 0) << std::strerror(errno);
  std::string Path = Dir.path("exec.sock");
  ExecutorOptions As = at(Path);
  As.Prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  As.Env = {"TMPDIR=" + Dir.dir()}; // for its asset directories
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(As));
  // Root passes the socket's mode; a host would not talk to a listener of
  // another user, so this one speaks for itself.
  sockaddr_un A = addressOf(Path);
  int Fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(::connect(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0) << std::strerror(errno);
  std::string Got = readUntilClosed(Fd, 10s);
  ::close(Fd);
  EXPECT_TRUE(mentions(Got, "serves only the executor's own user")) << Got;
  EXPECT_TRUE(mentions(Got, "runs as uid 0,")) << Got;
}

} // namespace
