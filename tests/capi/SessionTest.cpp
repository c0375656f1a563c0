//===- SessionTest.cpp - Opening, sharing and closing sessions ------------===//

#include "CapiHarness.h"
#include "Pace.h"
#include "Procfs.h"
#include "Sockets.h"

#include <arpa/inet.h>
#include <atomic>
#include <condition_variable>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

// The names current Catalyst releases call; the library aliases them.
extern "C" {
int64_t __catalyst__executor__open(const char *);
int64_t __catalyst__executor__send_binary(int64_t, const char *, uint32_t);
void __catalyst__executor__launch(int64_t, const char *, const char *, size_t, void *const *,
                                  const size_t *, const size_t *, size_t, void *const *,
                                  const size_t *, const size_t *);
int64_t __catalyst__executor__close(int64_t);
const char *__catalyst__executor__last_error(void);
}

using namespace catalyst::remote::test;

namespace {

using Clock = std::chrono::steady_clock;

// A peer that accepts connections and never says a word until released.
class SilentPeer {
public:
  SilentPeer() : Listener(true) {
    Thread = std::thread([this] {
      // Close-on-exec: an executor a test starts meanwhile must not hold
      // this connection open after the peer closes it.
      int Conn = ::accept4(Listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
      std::unique_lock<std::mutex> Lock(M);
      Accepted = Conn >= 0;
      Released.wait(Lock, [this] { return Done; });
      if (Conn >= 0)
        ::close(Conn);
    });
  }
  ~SilentPeer() {
    {
      std::lock_guard<std::mutex> Lock(M);
      Done = true;
    }
    Released.notify_all();
    // Unblocks accept() if nobody ever connected.
    ::shutdown(Listener.fd(), SHUT_RDWR);
    Thread.join();
  }
  std::string address() const { return Listener.address(); }
  bool accepted() {
    std::lock_guard<std::mutex> Lock(M);
    return Accepted;
  }

private:
  LoopbackSocket Listener;
  std::thread Thread;
  std::mutex M;
  std::condition_variable Released;
  bool Done = false;
  bool Accepted = false;
};

class SessionTest : public CapiTest {};

TEST_F(SessionTest, ClosedPortFailsFast) {
  LoopbackSocket Unused(false);
  std::string Address = Unused.address();
  Unused.close();
  auto Start = Clock::now();
  EXPECT_EQ(__catalyst__remote__open(Address.c_str()), 0);
  EXPECT_LT(Clock::now() - Start, hangBound(std::chrono::seconds(0)));
  EXPECT_NE(FailureLog::last().find(Address), std::string::npos) << FailureLog::last();
}

TEST_F(SessionTest, SilentPeerFailsWithinTheHandshakeTimeout) {
  SilentPeer Peer;
  auto Start = Clock::now();
  EXPECT_EQ(__catalyst__remote__open(Peer.address().c_str()), 0);
  auto Took = Clock::now() - Start;
  EXPECT_LT(Took, paced(std::chrono::seconds(15)));
  EXPECT_TRUE(Peer.accepted()) << "open gave up before even connecting";
  EXPECT_NE(FailureLog::last().find("handshake"), std::string::npos) << FailureLog::last();
}

// Connecting is done outside the library's registry lock: one executor
// that never answers does not hold up opening and using another.
TEST_F(SessionTest, AnOpenThatHangsDoesNotStallOtherSessions) {
  auto Peer = std::make_unique<SilentPeer>();
  std::atomic<bool> Returned{false};
  std::thread Stuck([&, Address = Peer->address()] {
    EXPECT_EQ(__catalyst__remote__open(Address.c_str()), 0);
    Returned = true;
  });
  if (!waitUntil([&] { return Peer->accepted(); }, paced(std::chrono::milliseconds(10000)))) {
    Peer.reset(); // the open, connected or not, then fails at once
    Stuck.join();
    FAIL() << "the open did not reach the silent peer within 10 s";
  }
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  std::mt19937_64 Rng(11);
  auto In = makeInput(Layout::Dense, {4}, 4, Rng);
  EXPECT_TRUE(checkLaunch(Session.get(), "map", rankSizeEntry("map", 1, 4), inputsOf({In.get()}),
                          {{1, 4}}));
  EXPECT_FALSE(Returned) << "the silent peer's open should still be waiting";
  Peer.reset(); // closes its connection: the stuck open fails now
  Stuck.join();
}

// A launch queued when its session is closed is joined by the close; a
// token does not keep its session, so awaiting it afterwards reports a
// failure through the handler (which, by default, would abort) and returns.
TEST_F(SessionTest, AwaitAfterCloseFailsThroughTheHandler) {
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  std::mt19937_64 Rng(21);
  auto In = makeInput(Layout::Dense, {3, 4}, 8, Rng);
  Outputs Out({{2, 8}});
  void *InDesc = In->D.data();
  size_t Rank = 2, Elem = 8;
  auto OutDescs = Out.descs();
  int64_t Token = __catalyst__remote__launch_async_memrefs(
      Session.get(), remoteEntry("map_r2_e8").c_str(), "map.o", 1, &InDesc, &Rank, &Elem, 1,
      OutDescs.data(), &Rank, &Elem);
  ASSERT_GT(Token, 0) << FailureLog::last();
  EXPECT_EQ(__catalyst__remote__close(Session.get()), 0) << FailureLog::last();
  Session.reset();
  Outputs Expected({{2, 8}});
  runLocal(hostEntry("map", "map_r2_e8"), {&In->D}, Expected);
  EXPECT_TRUE(sameOutputs(Out, Expected)) << "close joined the queued launch";
  size_t Before = FailureLog::count();
  __catalyst__remote__await(Token);
  EXPECT_EQ(FailureLog::count(), Before + 1);
  EXPECT_NE(FailureLog::last().find("was closed before the launch was awaited"), std::string::npos)
      << FailureLog::last();
}

TEST_F(SessionTest, MalformedAddressesAreErrors) {
  for (const char *Address : {"", "no-port-here", "127.0.0.1:", "[::1:80"}) {
    size_t Before = FailureLog::count();
    EXPECT_EQ(__catalyst__remote__open(Address), 0) << Address;
    EXPECT_EQ(FailureLog::count(), Before + 1) << Address;
  }
  EXPECT_EQ(__catalyst__remote__open(nullptr), 0);
}

TEST_F(SessionTest, SameAddressTwiceIsTheSameSession) {
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  EXPECT_EQ(__catalyst__remote__open(Exec.address().c_str()), Session.get());
  std::vector<pid_t> Pids;
  EXPECT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(2)));
  // Once closed, the address opens a new session.
  int64_t Old = Session.get();
  Session.reset();
  int64_t Again = __catalyst__remote__open(Exec.address().c_str());
  ASSERT_GT(Again, 0) << FailureLog::last();
  EXPECT_NE(Again, Old);
  Session.reset(Again);
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
}

TEST_F(SessionTest, ClosingTwiceIsHarmless) {
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  int64_t H = Session.get();
  EXPECT_EQ(__catalyst__remote__close(H), 0) << FailureLog::last();
  EXPECT_EQ(__catalyst__remote__close(H), 0) << FailureLog::last();
  EXPECT_EQ(__catalyst__remote__close(0), 0);
  // The handle is gone: using it is an error, not a crash.
  EXPECT_EQ(__catalyst__remote__send_binary(H, kernelObject("map").c_str(), 0), -1);
  Session.reset();
  // And the executor lets the connection go.
  std::vector<pid_t> Pids;
  EXPECT_TRUE(Exec.waitForConnections(0, Pids, std::chrono::seconds(5)));
}

// Functions that can fail have a definition per prefix, which reports
// failures the prefix's way; the others are one function under two names.
TEST_F(SessionTest, EveryFunctionHasBothNames) {
  auto Find = [](const std::string &Prefix, const char *Name) {
    return ::dlsym(RTLD_DEFAULT, ("__catalyst__" + Prefix + "__" + Name).c_str());
  };
  for (const char *Name :
       {"open", "send_binary", "launch", "launch_into", "launch_async", "launch_async_memrefs",
        "await", "call_wrapper", "close", "stats", "set_failure_handler"}) {
    EXPECT_NE(Find("remote", Name), nullptr) << Name;
    EXPECT_NE(Find("executor", Name), nullptr) << Name;
    EXPECT_NE(Find("remote", Name), Find("executor", Name)) << Name;
  }
  for (const char *Name : {"free_result", "last_error", "set_output_allocator"}) {
    EXPECT_NE(Find("remote", Name), nullptr) << Name;
    EXPECT_EQ(Find("remote", Name), Find("executor", Name)) << Name;
  }
}

TEST_F(SessionTest, ExecutorAliasesDriveALaunch) {
  ASSERT_TRUE(Exec.start());
  int64_t H = __catalyst__executor__open(Exec.address().c_str());
  ASSERT_GT(H, 0) << FailureLog::last();
  Session.reset(H);
  ASSERT_EQ(__catalyst__executor__send_binary(H, kernelObject("same_name_b").c_str(), 0), 0);
  auto In = makeDenseInput<int32_t>({2}, {4, 5});
  Outputs Out({{1, 4}});
  void *InDescs[] = {In->D.data()};
  size_t InRanks[] = {1}, InSizes[] = {4};
  auto OutDescs = Out.descs();
  auto OutRanks = Out.ranks();
  auto OutSizes = Out.elemSizes();
  __catalyst__executor__launch(H, remoteEntry("same_name").c_str(), "same_name_b.o", 1, InDescs,
                               InRanks, InSizes, 1, OutDescs.data(), OutRanks.data(),
                               OutSizes.data());
  EXPECT_EQ(as<int32_t>(Out[0].values()), (std::vector<int32_t>{40, 50}))
      << __catalyst__executor__last_error();
  EXPECT_EQ(__catalyst__executor__close(H), 0);
}

// Each thread opens its own executor, launches and closes, all at once.
TEST_F(SessionTest, FourThreadsWithTheirOwnSessions) {
  constexpr int Threads = 4, Launches = 20;
  std::vector<std::unique_ptr<ExecutorProcess>> Execs;
  for (int T = 0; T < Threads; ++T) {
    Execs.push_back(std::make_unique<ExecutorProcess>());
    ASSERT_TRUE(Execs.back()->start());
  }
  std::atomic<int> Good{0};
  std::vector<std::thread> Workers;
  for (int T = 0; T < Threads; ++T)
    Workers.emplace_back([&, T] {
      int64_t H = __catalyst__remote__open(Execs[T]->address().c_str());
      std::string Map = kernelObject("map");
      bool Ok = H > 0 && __catalyst__remote__send_binary(H, Map.c_str(), 0) == 0;
      std::mt19937_64 Rng(T);
      for (int I = 0; Ok && I < Launches; ++I) {
        auto In = makeInput(I % 2 ? Layout::Transposed : Layout::Strided, {5, 7}, 8, Rng);
        auto R = checkLaunch(H, "map", "map_r2_e8", {&In->D}, {{2, 8}});
        EXPECT_TRUE(R) << "thread " << T << ", launch " << I;
        Ok = R;
      }
      Ok = Ok && __catalyst__remote__close(H) == 0;
      Good += Ok;
    });
  for (auto &W : Workers)
    W.join();
  EXPECT_EQ(Good.load(), Threads);
  EXPECT_TRUE(FailureLog::all().empty()) << FailureLog::all().front();
}

// One thread keeps two executors busy: launches with memref arguments are
// queued on each session and awaited later, and come back as the same values
// as the kernel run locally.
TEST_F(SessionTest, AsyncLaunchesWithMemrefsAcrossTwoExecutors) {
  constexpr int Executors = 2, PerSession = 3;
  std::vector<std::unique_ptr<ExecutorProcess>> Execs;
  std::vector<ScopedSession> Sessions(Executors);
  std::string Map = kernelObject("map");
  for (int E = 0; E < Executors; ++E) {
    Execs.push_back(std::make_unique<ExecutorProcess>());
    ASSERT_TRUE(Execs.back()->start());
    Sessions[E].reset(__catalyst__remote__open(Execs[E]->address().c_str()));
    ASSERT_GT(Sessions[E].get(), 0) << FailureLog::last();
    ASSERT_EQ(__catalyst__remote__send_binary(Sessions[E].get(), Map.c_str(), 0), 0);
  }
  std::mt19937_64 Rng(11);
  std::vector<std::unique_ptr<Input>> Ins;
  std::vector<std::unique_ptr<Outputs>> Outs;
  std::vector<int64_t> Tokens;
  for (int L = 0; L < Executors * PerSession; ++L) {
    Ins.push_back(makeInput(L % 2 ? Layout::Transposed : Layout::Dense, {64, 33}, 8, Rng));
    Outs.push_back(std::make_unique<Outputs>(std::vector<OutSpec>{{2, 8}}));
    void *In = Ins.back()->D.data();
    size_t Rank = 2, Elem = 8;
    auto OutDescs = Outs.back()->descs();
    Tokens.push_back(__catalyst__remote__launch_async_memrefs(
        Sessions[L % Executors].get(), remoteEntry("map_r2_e8").c_str(), "map.o", 1, &In, &Rank,
        &Elem, 1, OutDescs.data(), &Rank, &Elem));
    ASSERT_GT(Tokens.back(), 0) << FailureLog::last();
  }
  for (size_t L = 0; L < Tokens.size(); ++L) {
    __catalyst__remote__await(Tokens[L]);
    Outputs Expected({{2, 8}});
    runLocal(hostEntry("map", "map_r2_e8"), {&Ins[L]->D}, Expected);
    EXPECT_TRUE(sameOutputs(*Outs[L], Expected)) << "launch " << L;
  }
  EXPECT_TRUE(FailureLog::all().empty()) << FailureLog::all().front();
  // A token is good for one await; awaiting it again, or a token never
  // issued, returns at once, as in Catalyst's runtime.
  __catalyst__remote__await(Tokens[0]);
  __catalyst__remote__await(Tokens.back() + 1000);
  EXPECT_TRUE(FailureLog::all().empty()) << FailureLog::all().front();
}

// Threads share one session: the same address gives every thread the same
// handle, and their launches interleave on it.
TEST_F(SessionTest, FourThreadsSharingOneSession) {
  constexpr int Threads = 4, Launches = 25;
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  std::atomic<int> Good{0};
  std::vector<std::thread> Workers;
  for (int T = 0; T < Threads; ++T)
    Workers.emplace_back([&, T] {
      bool Ok = __catalyst__remote__open(Exec.address().c_str()) == Session.get();
      std::mt19937_64 Rng(100 + T);
      for (int I = 0; Ok && I < Launches; ++I) {
        size_t E = ElemSizes[(T + I) % 5];
        auto In = makeInput(Layout::Reversed, {4, 3, 2}, E, Rng);
        Ok = checkLaunch(Session.get(), "map", rankSizeEntry("map", 3, E), {&In->D}, {{3, E}});
      }
      Good += Ok;
    });
  for (auto &W : Workers)
    W.join();
  EXPECT_EQ(Good.load(), Threads);
  EXPECT_TRUE(FailureLog::all().empty()) << FailureLog::all().front();
}

TEST_F(SessionTest, SigtermStopsTheExecutorAndItsConnections) {
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  std::vector<pid_t> Pids;
  ASSERT_TRUE(Exec.waitForConnections(1, Pids, paced(std::chrono::seconds(5))));
  EXPECT_TRUE(Exec.stop()) << "the executor ignored SIGTERM";
  auto Deadline = Clock::now() + paced(std::chrono::seconds(5));
  while (processAlive(Pids[0]) && Clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(processAlive(Pids[0])) << "connection process " << Pids[0] << " outlived SIGTERM";
  // The host learns the session is gone instead of hanging.
  Outputs Out({{0, 8}});
  EXPECT_FALSE(launchRemote(Session.get(), remoteEntry("map_r0_e8"), "map.o", {}, Out));
}

} // namespace
