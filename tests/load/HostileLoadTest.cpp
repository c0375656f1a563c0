//===- HostileLoadTest.cpp - A real host among a crowd of hostile peers ---===//
//
// For a minute (CATALYST_REMOTE_LOAD_SECONDS), up to 500 hostile peers at a
// time, from 1,000 addresses (127.0.1.0 and up), churn against an executor
// that requires a token: silent ones, ones that trickle a byte now and
// then, ones that connect and leave, ones that send garbage; each that is
// dropped is replaced by a new one. Meanwhile a host from 127.0.0.1 opens a
// session, launches and closes, again and again: every open-and-launch must
// succeed, the 99th percentile under a second; the executor forks only for
// that host and logs a bounded number of lines. The figures printed at the
// end are what docs/hostile-load.md reports. Label load: the plain suite
// only.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Procfs.h"
#include "Text.h"
#include "TokenFile.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cstdlib>
#include <netinet/in.h>
#include <random>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

enum class Behaviour { Silent, Trickle, Leave, Garbage };
constexpr int Behaviours = 4;
constexpr int Addresses = 1000;
constexpr size_t AtOnce = 500;

struct Peer {
  Behaviour B;
  Clock::time_point Next; // when a trickler sends its next byte
};

// The hostile crowd, on a thread of its own.
class Crowd {
public:
  explicit Crowd(uint16_t Port) : Port(Port), Epoll(::epoll_create1(EPOLL_CLOEXEC)) {}
  ~Crowd() {
    for (auto &[Fd, P] : Peers)
      ::close(Fd);
    ::close(Epoll);
  }

  void run(const std::atomic<bool> &Stop) {
    while (!Stop) {
      while (Peers.size() < AtOnce)
        if (!join())
          break;
      epoll_event Events[64];
      int N = ::epoll_wait(Epoll, Events, 64, 50);
      for (int I = 0; I < N; ++I)
        if (closed(Events[I]))
          drop(Events[I].data.fd);
      trickle();
    }
  }

  uint64_t connections() const { return Made; }

private:
  // Connects a new peer from one of the addresses; false when the system
  // is out of something (then the loop waits for drops).
  bool join() {
    int Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (Fd < 0)
      return false;
    sockaddr_in From{};
    From.sin_family = AF_INET;
    From.sin_addr.s_addr = htonl((127u << 24) + 256 + unsigned(Rng() % Addresses));
    sockaddr_in To{};
    To.sin_family = AF_INET;
    To.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    To.sin_port = htons(Port);
    if (::bind(Fd, reinterpret_cast<sockaddr *>(&From), sizeof(From)) != 0 ||
        (::connect(Fd, reinterpret_cast<sockaddr *>(&To), sizeof(To)) != 0 &&
         errno != EINPROGRESS)) {
      ::close(Fd);
      return false;
    }
    ++Made;
    auto B = Behaviour(Rng() % Behaviours);
    if (B == Behaviour::Leave) {
      ::close(Fd);
      return true;
    }
    if (B == Behaviour::Garbage) {
      char Junk[48];
      for (char &C : Junk)
        C = char(Rng());
      // Best effort: a connect still in progress takes nothing, and the
      // peer is then a silent one.
      [[maybe_unused]] ssize_t Sent = ::send(Fd, Junk, sizeof(Junk), MSG_NOSIGNAL);
    }
    epoll_event E{};
    E.events = EPOLLRDHUP | EPOLLIN;
    E.data.fd = Fd;
    ::epoll_ctl(Epoll, EPOLL_CTL_ADD, Fd, &E);
    Peers[Fd] = {B, Clock::now() + 300ms};
    return true;
  }

  // Reads what the executor sent (a challenge, a refusal): true once it
  // closed the connection.
  static bool closed(const epoll_event &E) {
    char Sink[4096];
    ssize_t N;
    while ((N = ::recv(E.data.fd, Sink, sizeof(Sink), MSG_DONTWAIT)) > 0) {
    }
    return N == 0 || (N < 0 && errno != EAGAIN) || (E.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR));
  }

  void drop(int Fd) {
    ::epoll_ctl(Epoll, EPOLL_CTL_DEL, Fd, nullptr);
    ::close(Fd);
    Peers.erase(Fd);
  }

  // A trickler sends one byte of a plausible header every 300 ms.
  void trickle() {
    auto Now = Clock::now();
    for (auto &[Fd, P] : Peers)
      if (P.B == Behaviour::Trickle && Now >= P.Next) {
        char Byte = 0;
        [[maybe_unused]] ssize_t Sent = ::send(Fd, &Byte, 1, MSG_NOSIGNAL);
        P.Next = Now + 300ms;
      }
  }

  uint16_t Port;
  int Epoll;
  std::mt19937_64 Rng{42};
  std::unordered_map<int, Peer> Peers;
  uint64_t Made = 0;
};

std::chrono::seconds loadDuration() {
  const char *S = std::getenv("CATALYST_REMOTE_LOAD_SECONDS");
  return std::chrono::seconds(S ? std::max(1, std::atoi(S)) : 60);
}

TEST(HostileLoadTest, ARealHostOpensAndLaunchesWithinASecond) {
  TokenFile Token;
  std::string Log = Token.dir() + "/executor.log";
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--token-file", Token.path()}, Log}));
  Crowd Hostile(uint16_t(std::stoi(Exec.address().substr(Exec.address().rfind(':') + 1))));
  std::atomic<bool> Stop{false};
  std::thread Churn([&] { Hostile.run(Stop); });

  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Token.secret());
  O.Transport = TransportKind::Tcp; // one connection, one process per session
  std::mt19937_64 Rng(9);
  std::vector<double> Ms;
  size_t Failures = 0;
  auto End = Clock::now() + loadDuration();
  while (Clock::now() < End) {
    auto Began = Clock::now();
    auto S = Session::open(Exec.address(), O);
    bool Ok = S && !(*S)->sendBinary(kernelObject("concat"), BinaryFormat::Object) &&
              concatMatches(**S, byteInputs({4096}, Rng));
    if (!S)
      ADD_FAILURE() << llvm::toString(S.takeError());
    Failures += !Ok;
    Ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - Began).count());
    std::this_thread::sleep_for(50ms);
  }
  Stop = true;
  Churn.join();

  std::sort(Ms.begin(), Ms.end());
  double P50 = Ms[Ms.size() / 2], P99 = Ms[std::min(Ms.size() - 1, Ms.size() * 99 / 100)];
  std::string Text = readFile(Log);
  size_t Forks = countOf(Text, "served by process"), Lines = countOf(Text, "\n");
  std::printf("hostile load: %zu host sessions (%zu failed), open+launch p50 %.1f ms, p99 %.1f "
              "ms, max %.1f ms; %llu hostile connections; executor forked %zu processes and "
              "logged %zu lines (%zu not about sessions)\n",
              Ms.size(), Failures, P50, P99, Ms.back(), (unsigned long long)Hostile.connections(),
              Forks, Lines, Lines - Forks);
  // What the executor said about the crowd, for the record.
  for (llvm::StringRef Rest = Text; !Rest.empty();) {
    auto [Line, Next] = Rest.split('\n');
    if (!Line.contains("served by process"))
      std::printf("  %s\n", Line.str().c_str());
    Rest = Next;
  }
  EXPECT_EQ(Failures, 0u);
  EXPECT_LT(P99, 1000.0);
  EXPECT_EQ(Forks, Ms.size()) << "only the real host's sessions get a process";
  // The first refusal and a summary per 10 s, plus a line for a session
  // ended by the host's close racing the session's end, at most.
  EXPECT_LE(Lines - Forks, 2 * size_t(loadDuration() / 10s) + 4) << Text.substr(0, 4000);
  EXPECT_GT(Hostile.connections(), 1000u) << "the crowd churned";
}

} // namespace
