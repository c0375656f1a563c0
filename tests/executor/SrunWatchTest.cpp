//===- SrunWatchTest.cpp - Seeing the step's srun end ---------------------===//
//
// executor/SrunWatch.h alone, without Slurm: a child process named "srun"
// listens on a loopback port given as SLURM_SRUN_COMM_PORT, as srun does
// for its tasks. The watch finds it, is not gone while it lives, and is
// woken and gone once it is killed; a listener of another name, or no
// listener, is not watched.
//
//===----------------------------------------------------------------------===//

#include "../../executor/SrunWatch.h"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace catalyst::remote::executor;

namespace {

// A child process named Name listening on a loopback port of its own,
// until it is killed.
class Listening {
public:
  explicit Listening(const char *Name) {
    int Ready[2];
    if (::pipe(Ready) != 0)
      return;
    Pid = ::fork();
    if (Pid == 0) {
      ::prctl(PR_SET_NAME, Name);
      uint16_t P = listenOnLoopback();
      if (::write(Ready[1], &P, sizeof(P)) != sizeof(P) || P == 0)
        ::_exit(1);
      for (;;)
        ::pause();
    }
    ::close(Ready[1]);
    if (Pid < 0 || ::read(Ready[0], &Port, sizeof(Port)) != sizeof(Port))
      Port = 0;
    ::close(Ready[0]);
  }
  ~Listening() { end(); }
  Listening(const Listening &) = delete;
  Listening &operator=(const Listening &) = delete;

  pid_t pid() const { return Pid; }
  uint16_t port() const { return Port; }
  void end() {
    if (Pid > 0) {
      ::kill(Pid, SIGKILL);
      ::waitpid(Pid, nullptr, 0);
    }
    Pid = 0;
  }

private:
  static uint16_t listenOnLoopback() {
    int Fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in A{};
    A.sin_family = AF_INET;
    A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t Len = sizeof(A);
    if (Fd < 0 || ::bind(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)) != 0 ||
        ::listen(Fd, 1) != 0 || ::getsockname(Fd, reinterpret_cast<sockaddr *>(&A), &Len) != 0)
      return 0;
    return ntohs(A.sin_port);
  }

  pid_t Pid = -1;
  uint16_t Port = 0;
};

void setCommPort(uint16_t Port) {
  ::setenv("SLURM_SRUN_COMM_PORT", std::to_string(Port).c_str(), 1);
}

TEST(SrunWatchTest, ReadsListeningSocketsOfAPort) {
  std::string Tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 0100007F:A1B2 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
      "       0 4242 1 0000000000000000 100 0 0 10 0\n"
      "   1: 0100007F:A1B2 0100007F:9999 01 00000000:00000000 00:00000000 00000000     0 "
      "       0 4343 1 0000000000000000 100 0 0 10 0\n"
      "   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
      "       0 4444 1 0000000000000000 100 0 0 10 0\n"
      "   3: garbage\n";
  EXPECT_EQ(listeningInodes(Tcp, 0xA1B2), std::vector<uint64_t>{4242})
      << "only the listening socket of that port";
  EXPECT_EQ(listeningInodes(Tcp, 22), std::vector<uint64_t>{4444});
  EXPECT_TRUE(listeningInodes(Tcp, 80).empty());
  EXPECT_TRUE(listeningInodes("", 22).empty());
}

TEST(SrunWatchTest, AnSrunThatEndsIsGone) {
  Listening Srun("srun");
  ASSERT_NE(Srun.port(), 0) << "the child could not listen";
  setCommPort(Srun.port());
  SrunWatch W = SrunWatch::find();
  ASSERT_TRUE(W.watching()) << "srun listening on SLURM_SRUN_COMM_PORT not found";
  EXPECT_EQ(W.srun(), Srun.pid());
  EXPECT_FALSE(W.gone()) << "srun lives";
  Srun.end();
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!W.gone() && std::chrono::steady_clock::now() < Deadline) {
    pollfd P{W.fd(), POLLIN, 0};
    ::poll(&P, 1, W.fd() >= 0 ? 10000 : W.pollTimeoutMs());
  }
  EXPECT_TRUE(W.gone()) << "srun was killed 10 s ago";
  ::unsetenv("SLURM_SRUN_COMM_PORT");
}

TEST(SrunWatchTest, OnlySrunIsWatched) {
  Listening Other("not-srun");
  ASSERT_NE(Other.port(), 0) << "the child could not listen";
  setCommPort(Other.port());
  EXPECT_FALSE(SrunWatch::find().watching()) << "a listener not named srun is not srun";
  Other.end();
  EXPECT_FALSE(SrunWatch::find().watching()) << "nothing listens on the port";
  ::unsetenv("SLURM_SRUN_COMM_PORT");
  EXPECT_FALSE(SrunWatch::find().watching()) << "no SLURM_SRUN_COMM_PORT, no srun";
  EXPECT_FALSE(SrunWatch().gone()) << "nothing watched is never gone";
}

} // namespace
