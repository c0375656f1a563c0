//===- SessionApiTest.cpp - The C++ session API ---------------------------===//
//
// What the C ABI cannot express: several sessions with one executor at once,
// session options (a short handshake timeout, a custom output allocator),
// and errors as llvm::Error values.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Memref.h"
#include "Pace.h"
#include "Procfs.h"
#include "catalyst/remote/Session.h"
#include "wire/Protocol.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <set>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<Session> openOrFail(const std::string &Address, const SessionOptions &O = {}) {
  auto S = Session::open(Address, forThisRun(O));
  if (!S) {
    ADD_FAILURE() << "open " << Address << ": " << llvm::toString(S.takeError());
    return nullptr;
  }
  return std::move(*S);
}

// Launches map_r<R>_e<E> on In and compares with the local kernel.
::testing::AssertionResult mapMatches(Session &S, Desc &In) {
  std::string Name = rankSizeEntry("map", In.rank(), In.elemSize());
  Desc Remote(In.rank(), In.elemSize()), Local(In.rank(), In.elemSize());
  MemrefArg InArg{In.data(), In.rank(), In.elemSize()};
  MemrefArg OutArg{Remote.data(), In.rank(), In.elemSize()};
  std::string Entry = remoteEntry(Name);
  if (auto Err = S.launch({Entry, "map.o", {InArg}, {OutArg}}))
    return ::testing::AssertionFailure() << llvm::toString(std::move(Err));
  void *Av[] = {In.data()};
  hostEntry("map", Name)(Local.data(), Av);
  bool Same = Remote.values() == Local.values() && Remote.sizes() == Local.sizes();
  auto Dense = Remote.isDenseRowMajor();
  std::free(Remote.allocated());
  std::free(Local.allocated());
  if (!Dense)
    return Dense;
  return Same ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "values differ";
}

class SessionApiTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }
  ExecutorProcess Exec;
};

TEST_F(SessionApiTest, FourThreadsEachWithTheirOwnSession) {
  constexpr int Threads = 4;
  std::atomic<int> Good{0};
  std::vector<std::thread> Workers;
  for (int T = 0; T < Threads; ++T)
    Workers.emplace_back([&, T] {
      auto S = openOrFail(Exec.address());
      if (!S)
        return;
      if (auto Err = S->sendBinary(kernelObject("map"), BinaryFormat::Object)) {
        ADD_FAILURE() << llvm::toString(std::move(Err));
        return;
      }
      std::mt19937_64 Rng(T);
      bool Ok = true;
      for (int I = 0; I < 20 && Ok; ++I) {
        auto In = makeInput(Layout::Strided, {3, 4, 5}, ElemSizes[I % 5], Rng);
        auto R = mapMatches(*S, In->D);
        EXPECT_TRUE(R) << "thread " << T << " launch " << I;
        Ok = R;
      }
      auto Err = S->close();
      EXPECT_FALSE(static_cast<bool>(Err)) << llvm::toString(std::move(Err));
      Good += Ok;
    });
  for (auto &W : Workers)
    W.join();
  EXPECT_EQ(Good.load(), Threads);
}

// What protects a session is fixed when it opens: reading it from one
// thread while another closes the session must not touch the transport
// close() tears down (a use after free, or a race under TSan).
TEST_F(SessionApiTest, ProtectionIsReadableWhileAnotherThreadCloses) {
  for (int Round = 0; Round < 20; ++Round) {
    auto S = openOrFail(Exec.address());
    ASSERT_TRUE(S);
    std::string First = S->protection();
    std::atomic<bool> Stop{false};
    std::thread Reader([&] {
      while (!Stop)
        EXPECT_EQ(S->protection(), First);
    });
    EXPECT_EQ(llvm::toString(S->close()), "");
    Stop = true;
    Reader.join();
    EXPECT_EQ(S->protection(), First);
  }
}

TEST_F(SessionApiTest, EachConnectionHasItsOwnProcessAndAssetDirectory) {
  // An executor whose temporary directory holds nothing else, so that its
  // private root is the one entry there.
  fs::path Dir = fs::temp_directory_path() / ("catalyst-remote-api-" + std::to_string(getpid()));
  fs::create_directories(Dir / "tmp");
  ExecutorProcess Own;
  ExecutorOptions Options;
  Options.Env = {"TMPDIR=" + (Dir / "tmp").string()};
  ASSERT_TRUE(Own.start(Options));
  auto A = openOrFail(Own.address());
  auto B = openOrFail(Own.address());
  ASSERT_TRUE(A && B);
  std::vector<pid_t> Pids;
  ASSERT_TRUE(Own.waitForConnections(2, Pids, std::chrono::seconds(5)));
  // Same file name, different contents, one per connection.
  fs::create_directories(Dir / "a");
  fs::create_directories(Dir / "b");
  std::ofstream(Dir / "a" / "shared.txt") << "from A";
  std::ofstream(Dir / "b" / "shared.txt") << "from B";
  EXPECT_FALSE(
      static_cast<bool>(A->sendBinary((Dir / "a" / "shared.txt").string(), BinaryFormat::Asset)));
  EXPECT_FALSE(
      static_cast<bool>(B->sendBinary((Dir / "b" / "shared.txt").string(), BinaryFormat::Asset)));
  fs::path Root = fs::directory_iterator(Dir / "tmp")->path();
  std::multiset<std::string> Found;
  for (pid_t P : Pids)
    Found.insert(readFile((Root / std::to_string(P) / "shared.txt").string()));
  EXPECT_EQ(Found, (std::multiset<std::string>{"from A", "from B"}));
  A.reset();
  B.reset();
  EXPECT_TRUE(Own.stop());
  fs::remove_all(Dir);
}

TEST_F(SessionApiTest, ShortHandshakeTimeoutAgainstASilentPeer) {
  int Fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in Addr{};
  Addr.sin_family = AF_INET;
  Addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t Len = sizeof(Addr);
  ASSERT_EQ(::bind(Fd, reinterpret_cast<sockaddr *>(&Addr), sizeof(Addr)), 0);
  ASSERT_EQ(::listen(Fd, 4), 0);
  ::getsockname(Fd, reinterpret_cast<sockaddr *>(&Addr), &Len);
  // The kernel completes the TCP handshake from the backlog; nobody answers.
  SessionOptions O;
  O.HandshakeTimeout = std::chrono::milliseconds(500);
  auto Start = Clock::now();
  auto S = Session::open("127.0.0.1:" + std::to_string(ntohs(Addr.sin_port)), O);
  auto Took = Clock::now() - Start;
  ASSERT_FALSE(static_cast<bool>(S));
  std::string Msg = llvm::toString(S.takeError());
  EXPECT_NE(Msg.find("handshake"), std::string::npos) << Msg;
  EXPECT_GE(Took, std::chrono::milliseconds(400));
  EXPECT_LT(Took, hangBound(std::chrono::milliseconds(500)));
  ::close(Fd);
}

// The output allocator of CustomOutputAllocator: it records every buffer it
// hands out and gets back, and can kill the session's connection process
// when asked for the buffer numbered KillAt (counting from 1), so that the
// launch fails after outputs were allocated on the host.
std::vector<void *> Allocated, Released;
size_t KillAt = 0;
pid_t KillPid = -1;
void *countAlloc(size_t N) {
  void *P = std::malloc(N);
  Allocated.push_back(P);
  if (Allocated.size() == KillAt && ::kill(KillPid, SIGKILL) == 0) {
    EXPECT_TRUE(waitUntilExited(KillPid, paced(std::chrono::milliseconds(10000))))
        << "connection process " << KillPid << " outlived SIGKILL by 10 s";
  }
  return P;
}
void countRelease(void *P) {
  Released.push_back(P);
  std::free(P);
}

std::vector<void *> sorted(std::vector<void *> V) {
  std::sort(V.begin(), V.end());
  return V;
}

TEST_F(SessionApiTest, CustomOutputAllocator) {
  Allocated.clear();
  Released.clear();
  KillAt = 0;
  SessionOptions O;
  O.Outputs = {&countAlloc, &countRelease};
  auto S = openOrFail(Exec.address(), O);
  ASSERT_TRUE(S);
  ASSERT_FALSE(static_cast<bool>(S->sendBinary(kernelObject("multi"), BinaryFormat::Object)));
  ASSERT_FALSE(static_cast<bool>(S->sendBinary(kernelObject("crash"), BinaryFormat::Object)));
  std::mt19937_64 Rng(1);
  std::vector<std::unique_ptr<Input>> Ins;
  for (auto [Sizes, E] : std::vector<std::pair<std::vector<int64_t>, size_t>>{
           {{4}, 8}, {{4}, 8}, {{4}, 8}, {{4}, 8}, {{2, 3}, 4}, {{}, 8}, {{2, 2, 2}, 1}, {{3}, 16}})
    Ins.push_back(makeInput(Layout::Dense, Sizes, E, Rng));
  std::vector<MemrefArg> InArgs;
  for (auto &In : Ins)
    InArgs.push_back({In->D.data(), In->D.rank(), In->D.elemSize()});
  Desc O0(1, 8), O1(2, 4), O2(0, 8);
  std::vector<MemrefArg> OutArgs = {{O0.data(), 1, 8}, {O1.data(), 2, 4}, {O2.data(), 0, 8}};
  ASSERT_FALSE(static_cast<bool>(S->launch({remoteEntry("multi"), "multi.o", InArgs, OutArgs})));
  EXPECT_EQ(Allocated, (std::vector<void *>{O0.allocated(), O1.allocated(), O2.allocated()}));
  EXPECT_TRUE(Released.empty());
  for (Desc *D : {&O0, &O1, &O2})
    std::free(D->allocated());
  // A kernel that dies returns no outputs: nothing is allocated for them,
  // and the descriptors are zeroed.
  Allocated.clear();
  std::string Msg = errorText(S->launch({remoteEntry("crash"), "crash.o", {}, OutArgs}));
  EXPECT_NE(Msg.find(Exec.address()), std::string::npos) << Msg;
  EXPECT_TRUE(Allocated.empty());
  EXPECT_TRUE(O0.allZero() && O1.allZero() && O2.allZero());
  EXPECT_FALSE(S->connected());
}

// The connection process dies after the host allocated outputs of the
// launch: the naive strategy reads each output after allocating its
// buffer, so killing the process from inside the allocator makes the read
// fail. Every buffer allocated is released exactly once, and nothing is
// handed back.
TEST_F(SessionApiTest, ConnectionLostAfterOutputsWereAllocated) {
  Allocated.clear();
  Released.clear();
  SessionOptions O;
  O.Outputs = {&countAlloc, &countRelease};
  O.Strategy = Strategy::Naive;
  auto S = openOrFail(Exec.address(), O);
  ASSERT_TRUE(S);
  ASSERT_FALSE(static_cast<bool>(S->sendBinary(kernelObject("alias"), BinaryFormat::Object)));
  std::vector<pid_t> Pids;
  ASSERT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(5)));
  auto In = makeDenseInput<int32_t>({6}, {1, 2, 3, 4, 5, 6});
  MemrefArg InArg{In->D.data(), 1, 4};
  Desc O0(1, 4), O1(1, 4), O2(1, 4);
  std::vector<MemrefArg> OutArgs = {{O0.data(), 1, 4}, {O1.data(), 1, 4}, {O2.data(), 1, 4}};
  // Output 0 is allocated and filled; the process dies as output 1's buffer
  // is allocated, so reading output 1 fails.
  KillPid = Pids[0];
  KillAt = 2;
  std::string Msg = errorText(S->launch({remoteEntry("alias_input"), "alias.o", {InArg}, OutArgs}));
  KillAt = 0;
  EXPECT_NE(Msg.find(Exec.address()), std::string::npos) << Msg;
  EXPECT_EQ(Allocated.size(), 2u);
  EXPECT_EQ(sorted(Released), sorted(Allocated));
  EXPECT_TRUE(O0.allZero() && O1.allZero() && O2.allZero());
  EXPECT_FALSE(S->connected());
}

// Lent output buffers: one per output or none, and an async launch keeps
// them with the rest of its call.
TEST_F(SessionApiTest, LentBuffersWithSyncAndAsyncLaunches) {
  auto S = openOrFail(Exec.address());
  ASSERT_TRUE(S);
  ASSERT_FALSE(static_cast<bool>(S->sendBinary(kernelObject("map"), BinaryFormat::Object)));
  std::mt19937_64 Rng(5);
  auto In = makeInput(Layout::Strided, {5}, 4, Rng);
  std::string Entry = remoteEntry(rankSizeEntry("map", 1, 4));
  MemrefArg InArg{In->D.data(), 1, 4};
  Desc Out(1, 4), Expected(1, 4);
  MemrefArg OutArg{Out.data(), 1, 4};
  std::vector<char> A(20), B(20);
  std::vector<llvm::MutableArrayRef<char>> Two{A, B};
  std::string Msg = errorText(S->launch({Entry, "map.o", {InArg}, {OutArg}, Two}));
  EXPECT_NE(Msg.find("2 buffers to receive outputs into, for 1 outputs"), std::string::npos) << Msg;
  EXPECT_TRUE(Out.allZero());

  void *Av[] = {In->D.data()};
  hostEntry("map", rankSizeEntry("map", 1, 4))(Expected.data(), Av);
  std::vector<llvm::MutableArrayRef<char>> One{A};
  uint64_t Ticket = S->launchAsync({Entry, "map.o", {InArg}, {OutArg}, One});
  ASSERT_FALSE(static_cast<bool>(S->await(Ticket)));
  EXPECT_EQ(Out.allocated(), A.data());
  EXPECT_EQ(Out.values(), Expected.values());
  std::free(Expected.allocated());
}

// Each strategy asked of a full executor is granted; an --upstream-only one
// grants only the upstream protocol, whatever is asked.
TEST_F(SessionApiTest, StrategiesAreGrantedOrFallBack) {
  ExecutorProcess Upstream;
  ASSERT_TRUE(Upstream.start({/*UpstreamOnly=*/true, {}, {}}));
  const std::pair<Strategy, Strategy> Full[] = {{Strategy::Auto, Strategy::ZeroCopy},
                                                {Strategy::ZeroCopy, Strategy::ZeroCopy},
                                                {Strategy::Batched, Strategy::Batched},
                                                {Strategy::Naive, Strategy::Naive}};
  std::mt19937_64 Rng(8);
  for (auto [Ask, Expect] : Full) {
    SCOPED_TRACE(strategyName(Ask));
    SessionOptions O;
    O.Strategy = Ask;
    auto S = openOrFail(Exec.address(), O);
    auto U = openOrFail(Upstream.address(), O);
    ASSERT_TRUE(S && U);
    EXPECT_EQ(S->strategy(), Expect);
    EXPECT_EQ(U->strategy(), Strategy::Naive);
    for (Session *Each : {S.get(), U.get()}) {
      ASSERT_FALSE(static_cast<bool>(Each->sendBinary(kernelObject("map"), BinaryFormat::Object)));
      auto In = makeInput(Layout::Transposed, {6, 5}, 16, Rng);
      EXPECT_TRUE(mapMatches(*Each, In->D));
      EXPECT_EQ(Each->stats().Launches, 1u);
    }
  }
}

TEST_F(SessionApiTest, ErrorsNameWhatFailed) {
  auto S = openOrFail(Exec.address());
  ASSERT_TRUE(S);
  EXPECT_NE(
      errorText(S->sendBinary("/nonexistent/k.o", BinaryFormat::Object)).find("/nonexistent/k.o"),
      std::string::npos);
  EXPECT_NE(
      errorText(S->sendBinary(kernelObject("map"), static_cast<BinaryFormat>(9))).find("format"),
      std::string::npos);
  auto Missing = S->callWrapper("no_such_wrapper_anywhere", {});
  ASSERT_FALSE(static_cast<bool>(Missing));
  EXPECT_NE(llvm::toString(Missing.takeError()).find("no_such_wrapper_anywhere"),
            std::string::npos);
  EXPECT_NE(errorText(S->await(424242)).find("424242"), std::string::npos);
  EXPECT_FALSE(static_cast<bool>(S->close()));
  EXPECT_FALSE(S->connected());
  EXPECT_FALSE(static_cast<bool>(S->close())) << "closing twice must be harmless";
  EXPECT_FALSE(errorText(S->sendBinary(kernelObject("map"), BinaryFormat::Object)).empty());
}

} // namespace

// What each kind of executor announces, as a tool (catalyst-remote ping)
// shows it.
TEST_F(SessionApiTest, TellsWhatTheExecutorOffers) {
  ExecutorProcess Upstream;
  ASSERT_TRUE(Upstream.start({/*UpstreamOnly=*/true, {}, {}}));
  auto S = openOrFail(Exec.address());
  auto U = openOrFail(Upstream.address());
  ASSERT_TRUE(S && U);
  const ExecutorInfo &Full = S->executor();
  EXPECT_EQ(Full.Version, CATALYST_REMOTE_VERSION);
  EXPECT_EQ(Full.Protocol, wire::ProtocolVersion);
  EXPECT_EQ(Full.Strategies,
            (std::vector<Strategy>{Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive}));
  EXPECT_TRUE(Full.Heartbeats);
  EXPECT_TRUE(Full.WrapperErrors);
  EXPECT_FALSE(Full.Authenticated);
  const ExecutorInfo &Up = U->executor();
  EXPECT_EQ(Up.Version, "");
  EXPECT_EQ(Up.Protocol, 0u);
  EXPECT_EQ(Up.Strategies, std::vector<Strategy>{Strategy::Naive});
  EXPECT_FALSE(Up.Heartbeats);
  EXPECT_FALSE(Up.WrapperErrors);
}

// A ping is one round trip and no launch; it works against Catalyst's
// upstream services too, and fails once the session is closed.
TEST_F(SessionApiTest, PingIsOneRoundTrip) {
  ExecutorProcess Upstream;
  ASSERT_TRUE(Upstream.start({/*UpstreamOnly=*/true, {}, {}}));
  for (const std::string &Address : {Exec.address(), Upstream.address()}) {
    SCOPED_TRACE(Address);
    auto S = openOrFail(Address);
    ASSERT_TRUE(S);
    Traffic Before = S->traffic();
    for (int I = 0; I < 3; ++I)
      EXPECT_FALSE(static_cast<bool>(S->ping()));
    Traffic After = S->traffic();
    // Three requests and three replies, each at least a frame header.
    EXPECT_GE(After.Sent - Before.Sent, 3u * 32);
    EXPECT_GE(After.Received - Before.Received, 3u * 32);
    EXPECT_EQ(S->stats().Launches, 0u);
    ASSERT_FALSE(static_cast<bool>(S->close()));
    EXPECT_NE(errorText(S->ping()).find("closed"), std::string::npos);
    EXPECT_EQ(S->traffic().Sent, 0u);
  }
}

// Bytes count as they move, not per message: while the executor's
// connection process is stopped, a large launch's input goes out only as far
// as the socket buffers take it, and that part is already counted.
// Over TCP: traffic is what crosses the socket, and over shared memory a
// launch's payload does not.
TEST_F(SessionApiTest, TrafficCountsBytesAsTheyMove) {
  SessionOptions O;
  O.Transport = TransportKind::Tcp;
  auto S = openOrFail(Exec.address(), O);
  ASSERT_TRUE(S);
  ASSERT_FALSE(static_cast<bool>(S->sendBinary(kernelObject("concat"), BinaryFormat::Object)));
  std::vector<pid_t> Pids;
  ASSERT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(5)));
  constexpr int64_t Bytes = int64_t(64) << 20;
  auto In = makeDenseInput<uint8_t>({Bytes}, std::vector<uint8_t>(Bytes, 7));
  Desc Out(1, 1);
  MemrefArg InArg{In->D.data(), 1, 1}, OutArg{Out.data(), 1, 1};
  std::string Entry = remoteEntry("concat_1");
  // The first launch sizes the executor's slab, which the second then needs
  // no round trip for: what it sends is its input. It also grows the
  // socket buffers past a send slice, which then goes out even to a
  // stopped peer.
  ASSERT_FALSE(static_cast<bool>(S->launch({Entry, "concat.o", {InArg}, {OutArg}})));
  std::free(Out.allocated());
  Traffic Start = S->traffic();
  ASSERT_EQ(::kill(Pids[0], SIGSTOP), 0);
  ASSERT_TRUE(waitUntilStopped(Pids[0], std::chrono::seconds(5)));
  uint64_t Ticket = S->launchAsync({Entry, "concat.o", {InArg}, {OutArg}});
  // More than any message but a launch's could be.
  constexpr uint64_t Some = 32 << 10;
  uint64_t Sent = 0;
  auto Deadline = Clock::now() + paced(std::chrono::seconds(5));
  while ((Sent = S->traffic().Sent - Start.Sent) <= Some && Clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ::kill(Pids[0], SIGCONT);
  ASSERT_FALSE(static_cast<bool>(S->await(Ticket)));
  EXPECT_GT(Sent, Some) << "the input was counted only once all of it had gone";
  EXPECT_LT(Sent, uint64_t(Bytes)) << "the executor was stopped: not all could have gone";
  EXPECT_GE(S->traffic().Sent - Start.Sent, uint64_t(Bytes));
  EXPECT_GE(S->traffic().Received - Start.Received, uint64_t(Bytes));
  std::free(Out.allocated());
}
