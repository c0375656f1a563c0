//===- HostilePeerTest.cpp - A session against an executor that lies ------===//
//
// The executor here is this test process: ORC's own EPC server over the
// engine's transport, with the memory manager and the upstream services a
// real executor has, so a session connects, links concat.o into it and
// launches. Its output services lie on demand: an empty or short read, a
// read announcing 2^61 buffers, a descriptor whose span wraps, a batched
// descriptor area of the wrong size. Each launch fails with an error that
// says what was wrong, its output stays zeroed, and the host lives.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "FakeExecutor.h"
#include "Kernels.h"
#include "Pace.h"
#include "Procfs.h"
#include "TamperRelay.h"
#include "Text.h"
#include "wire/Protocol.h"
#include "wire/SocketTransport.h"

#include "llvm/ExecutionEngine/Orc/Shared/OrcRTBridge.h"
#include "llvm/ExecutionEngine/Orc/TargetProcess/DefaultHostBootstrapValues.h"
#include "llvm/ExecutionEngine/Orc/TargetProcess/SimpleExecutorMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/TargetProcess/SimpleRemoteEPCServer.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Endian.h"

#include <atomic>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace llvm;
using namespace llvm::orc;
using namespace llvm::orc::shared;
using namespace std::chrono_literals;

namespace {

enum class Lie { None, EmptyRead, ShortRead, HugeRead, WrappingSpan, ShortDescriptors };
std::atomic<Lie> Lying{Lie::None};
// The protocol version the lying executor announces.
std::atomic<uint32_t> Announced{wire::ProtocolVersion};
// The heartbeat interval the host asked for, in ms.
std::atomic<uint32_t> AskedInterval{0};

WrapperFunctionBuffer hugeCount() {
  char Bytes[8];
  support::endian::write64le(Bytes, uint64_t(1) << 61);
  return WrapperFunctionBuffer::copyFrom(Bytes, 8);
}

using ReadSig = SPSSequence<SPSSequence<uint8_t>>(SPSSequence<SPSExecutorAddrRange>);

CWrapperFunctionBuffer readBuffers(const char *Data, size_t Size) {
  Lie L = Lying.load();
  if (L == Lie::HugeRead)
    return hugeCount().release();
  auto Read = [L](std::vector<ExecutorAddrRange> Rs) {
    std::vector<std::vector<uint8_t>> Out;
    for (const ExecutorAddrRange &R : Rs)
      Out.emplace_back(R.Start.toPtr<uint8_t *>(), R.End.toPtr<uint8_t *>());
    if (L == Lie::EmptyRead)
      Out.clear();
    if (L == Lie::ShortRead)
      for (auto &B : Out)
        B.pop_back();
    return Out;
  };
  return WrapperFunction<ReadSig>::handle(Data, Size, Read).release();
}

CWrapperFunctionBuffer alloc(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSAllocSig>::handle(
             Data, Size, [](uint64_t Bytes) { return ExecutorAddr::fromPtr(std::malloc(Bytes)); })
      .release();
}

CWrapperFunctionBuffer release(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSFreeSig>::handle(
             Data, Size, [](ExecutorAddr A) { std::free(A.toPtr<void *>()); })
      .release();
}

// Runs the entry; then, when lying, makes its rank-1 output's span wrap.
CWrapperFunctionBuffer invoke(const char *Data, size_t Size) {
  auto Run = [](ExecutorAddr Entry, std::vector<ExecutorAddr> RvAv) {
    Entry.toPtr<void (*)(void *, void *)>()(RvAv[0].toPtr<void *>(), RvAv[1].toPtr<void *>());
    if (Lying.load() == Lie::WrappingSpan) {
      int64_t *Rv = RvAv[0].toPtr<int64_t *>();
      Rv[3] = 2;         // size
      Rv[4] = INT64_MAX; // stride
    }
  };
  return WrapperFunction<wire::SPSInvokeSig>::handle(Data, Size, Run).release();
}

CWrapperFunctionBuffer storeAsset(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSStoreAssetSig>::handle(
             Data, Size, [](ArrayRef<char>, std::string) { return int32_t(0); })
      .release();
}

// A descriptor area one slot short, whatever the ranks asked for.
CWrapperFunctionBuffer batchedInvoke(const char *Data, size_t Size) {
  auto Short = [](ExecutorAddr, ExecutorAddr, std::vector<uint64_t> Ranks, ExecutorAddr,
                  uint64_t) -> Expected<std::tuple<std::vector<char>, uint64_t, uint64_t>> {
    uint64_t Bytes = 0;
    for (uint64_t R : Ranks)
      Bytes += wire::MemrefDesc::byteSize(R);
    return std::make_tuple(std::vector<char>(Bytes - 8), uint64_t(0), uint64_t(0));
  };
  return WrapperFunction<wire::SPSBatchedInvokeSig>::handle(Data, Size, Short).release();
}

CWrapperFunctionBuffer batchedRelease(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSBatchedReleaseSig>::handle(Data, Size, [] {}).release();
}

// Records the interval asked for; sends no heartbeat.
CWrapperFunctionBuffer enableLiveness(const char *Data, size_t Size) {
  return WrapperFunction<wire::SPSLivenessEnableSig>::handle(Data, Size,
                                                             [](uint32_t IntervalMs) {
                                                               AskedInterval = IntervalMs;
                                                               return wire::LivenessVersion;
                                                             })
      .release();
}

Error setup(SimpleRemoteEPCServer::Setup &S) {
  S.setDispatcher(std::make_unique<SimpleRemoteEPCServer::ThreadDispatcher>());
  S.bootstrapSymbols() = SimpleRemoteEPCServer::defaultBootstrapSymbols();
  addDefaultBootstrapValuesForHostProcess(S.bootstrapMap(), S.bootstrapSymbols());
  S.services().push_back(std::make_unique<rt_bootstrap::SimpleExecutorMemoryManager>());
  auto &Sym = S.bootstrapSymbols();
  Sym[rt::MemoryReadBuffersWrapperName] = ExecutorAddr::fromPtr(&readBuffers);
  Sym[wire::AllocName] = ExecutorAddr::fromPtr(&alloc);
  Sym[wire::FreeName] = ExecutorAddr::fromPtr(&release);
  Sym[wire::InvokeName] = ExecutorAddr::fromPtr(&invoke);
  Sym[wire::StoreAssetName] = ExecutorAddr::fromPtr(&storeAsset);
  Sym[wire::BatchedInvokeName] = ExecutorAddr::fromPtr(&batchedInvoke);
  Sym[wire::BatchedReleaseName] = ExecutorAddr::fromPtr(&batchedRelease);
  Sym[wire::LivenessEnableName] = ExecutorAddr::fromPtr(&enableLiveness);
  uint32_t Protocol = Announced.load();
  std::vector<char> Version(SPSArgList<wire::SPSProtocolValue>::size(Protocol));
  SPSOutputBuffer OB(Version.data(), Version.size());
  if (!SPSArgList<wire::SPSProtocolValue>::serialize(OB, Protocol))
    return createStringError(inconvertibleErrorCode(), "cannot encode the protocol version");
  S.bootstrapMap()[wire::ProtocolKey] = std::move(Version);
  return Error::success();
}

// Serves one connection on a loopback port, on a thread of its own.
class LyingExecutor {
public:
  ::testing::AssertionResult start() {
    sockaddr_in A{};
    A.sin_family = AF_INET;
    A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t Len = sizeof(A);
    Listener = socket(AF_INET, SOCK_STREAM, 0);
    if (Listener < 0 || bind(Listener, reinterpret_cast<sockaddr *>(&A), Len) != 0 ||
        listen(Listener, 1) != 0 || getsockname(Listener, reinterpret_cast<sockaddr *>(&A), &Len))
      return ::testing::AssertionFailure() << "cannot listen: " << strerror(errno);
    Address = "127.0.0.1:" + std::to_string(ntohs(A.sin_port));
    Server = std::thread([this] { serve(); });
    return ::testing::AssertionSuccess();
  }
  ~LyingExecutor() {
    Lying = Lie::None;
    if (Listener >= 0)
      shutdown(Listener, SHUT_RDWR);
    if (Server.joinable())
      Server.join();
    close(Listener);
  }
  std::string Address;
  // The server's transport once it has sent its setup message, until the
  // host's session ends (the test's thread writes through it meanwhile).
  std::atomic<wire::SocketTransport *> Transport{nullptr};

private:
  void serve() {
    int Fd = accept(Listener, nullptr, nullptr);
    if (Fd < 0)
      return;
    wire::SocketTransport *T = nullptr;
    auto S = SimpleRemoteEPCServer::Create<wire::SocketTransport>(setup, Fd,
                                                                  wire::TransportOptions(), &T);
    Transport = T;
    if (!S) {
      ADD_FAILURE() << toString(S.takeError());
      return;
    }
    if (auto Err = (*S)->waitForDisconnect())
      ADD_FAILURE() << "the lying executor's session: " << toString(std::move(Err));
  }

  int Listener = -1;
  std::thread Server;
};

struct Case {
  Strategy S;
  Lie L;
  const char *Says;
};

void PrintTo(const Case &C, std::ostream *OS) {
  *OS << strategyTestName(C.S) << " expecting '" << C.Says << "'";
}

class HostilePeerTest : public ::testing::TestWithParam<Case> {};

TEST_P(HostilePeerTest, TheLaunchFailsSayingWhatWasWrong) {
  LyingExecutor Exec;
  ASSERT_TRUE(Exec.start());
  {
    auto S = openWithConcat(Exec.Address, GetParam().S);
    ASSERT_TRUE(S);
    std::mt19937_64 Rng(9);
    auto Ins = byteInputs({64}, Rng);
    if (GetParam().S == Strategy::Naive) {
      ASSERT_TRUE(concatMatches(*S, Ins)) << "honest at first";
    }
    Lying = GetParam().L;
    Desc Out(1, 1);
    Out.poison();
    std::vector<MemrefArg> Args = {{Ins[0]->D.data(), 1, 1}};
    std::string Msg =
        errorText(S->launch({remoteEntry("concat_1"), "concat.o", Args, {{Out.data(), 1, 1}}}));
    EXPECT_NE(Msg.find(GetParam().Says), std::string::npos) << Msg;
    EXPECT_TRUE(Out.allZero());
    Lying = Lie::None;
  }
}

const Case Cases[] = {
    {Strategy::Naive, Lie::EmptyRead, "malformed reply from the executor: 0 buffers read for 1"},
    {Strategy::Naive, Lie::ShortRead, "buffer 0 holds 39 bytes for a span of 40"},
    {Strategy::Naive, Lie::HugeRead, "malformed reply from the executor to read memory"},
    {Strategy::Naive, Lie::WrappingSpan,
     "output 0: the span of its elements (offsets 0 to 9223372036854775807) overflows"},
    {Strategy::Batched, Lie::ShortDescriptors, "32 bytes of output descriptors, expected 40"},
};

INSTANTIATE_TEST_SUITE_P(Lies, HostilePeerTest, ::testing::ValuesIn(Cases),
                         [](const ::testing::TestParamInfo<Case> &I) {
                           return std::string(strategyTestName(I.param.S)) + "_" +
                                  std::to_string(I.index);
                         });

// A naive session with the lying executor, and the executor's end of it,
// which the test writes through.
class HostileWireTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(Exec.start());
    S = openWithConcat(Exec.Address, Strategy::Naive);
    ASSERT_TRUE(S);
    ASSERT_TRUE(waitUntil([&] { return Exec.Transport.load() != nullptr; }, paced(5s)));
    T = Exec.Transport.load();
  }
  LyingExecutor Exec;
  std::unique_ptr<Session> S;
  wire::SocketTransport *T = nullptr;
};

// The error of a launch on S, which has lost its connection.
FailureReport launchAfterTheEnd(Session &S) {
  EXPECT_TRUE(waitUntil([&] { return !S.connected(); }, paced(5s)));
  std::mt19937_64 Rng(3);
  auto Ins = byteInputs({64}, Rng);
  Desc Out(1, 1);
  std::vector<MemrefArg> Args = {{Ins[0]->D.data(), 1, 1}};
  return failureOf(S.launch({remoteEntry("concat_1"), "concat.o", Args, {{Out.data(), 1, 1}}}));
}

// ORC's host takes a Setup message as the reply to its first call: a
// second one, once that call was answered, would be handed a call that
// is not there (LLVM 22.1 then dereferences the end of a map). The host
// refuses it, naming it, and lives.
TEST_F(HostileWireTest, ASecondSetupMessageEndsTheSessionNamingIt) {
  char Body[8] = {};
  ASSERT_FALSE(bool(T->sendMessage(SimpleRemoteEPCOpcode::Setup, 0, ExecutorAddr(), Body)));
  auto [Kind, Msg] = launchAfterTheEnd(*S);
  EXPECT_TRUE(mentions(Msg, "the session with " + Exec.Address + " is closed")) << Msg;
  EXPECT_TRUE(mentions(Msg, "the peer sent a Setup message (opcode 0) after its first message"))
      << Msg;
}

// An executor of another protocol version is refused, naming both.
TEST(HostileVersionTest, AnotherProtocolVersionIsRefusedNamingBoth) {
  Announced = wire::ProtocolVersion + 1;
  LyingExecutor Exec;
  ASSERT_TRUE(Exec.start());
  auto S = Session::open(Exec.Address, {});
  Announced = wire::ProtocolVersion;
  ASSERT_FALSE(S);
  std::string Msg = toString(S.takeError());
  EXPECT_TRUE(mentions(Msg, "the executor at " + Exec.Address +
                                " speaks catalyst-remote protocol " +
                                std::to_string(wire::ProtocolVersion + 1) + ", this host " +
                                std::to_string(wire::ProtocolVersion)))
      << Msg;
}

// However short the liveness timeout, the host asks for heartbeats no more
// often than the protocol's floor.
TEST(HostileLivenessTest, TheHostAsksForNoHeartbeatIntervalBelowTheFloor) {
  LyingExecutor Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.LivenessTimeout = 4ms;
  AskedInterval = 0;
  auto S = Session::open(Exec.Address, O);
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(AskedInterval.load(), uint32_t(wire::MinHeartbeatInterval.count()));
}

uint64_t peakVirtualKiB() {
  std::string Status = readFile("/proc/self/status");
  size_t At = Status.find("VmPeak:");
  return At == std::string::npos ? 0 : std::stoull(Status.substr(At + 7));
}

// A header announcing a body of 8 GiB reserves nothing of the kind: the
// body's memory grows as its bytes arrive. 32 MiB of it are sent, more
// than the socket's buffers hold, so the host has read most of them when
// the send returns; then the executor goes, mid-message.
TEST_F(HostileWireTest, AHugeAnnouncedMessageReservesOnlyWhatArrived) {
  uint64_t Before = peakVirtualKiB();
  std::string Frame(wire::FrameHeaderSize + (32 << 20), 'x');
  wire::encodeHeader(Frame.data(), uint64_t(8) << 30, SimpleRemoteEPCOpcode::Result, 1,
                     ExecutorAddr());
  for (size_t Sent = 0; Sent < Frame.size();) {
    ssize_t N = ::send(T->fd(), Frame.data() + Sent, Frame.size() - Sent, MSG_NOSIGNAL);
    ASSERT_GT(N, 0) << strerror(errno);
    Sent += size_t(N);
  }
  uint64_t Grown = peakVirtualKiB() - Before;
  ::shutdown(T->fd(), SHUT_RDWR);
  auto [Kind, Msg] = launchAfterTheEnd(*S);
  EXPECT_EQ(Kind, FailureKind::ExecutorLost) << Msg;
  // Whatever the allocator reserves for itself besides, far below 8 GiB.
  EXPECT_LT(Grown, uint64_t(3) << 20) << "KiB of address space more at the peak";
}

// A zero-copy result for a launch nobody waits for (its sequence number
// rewritten on the way) fails the launch that waits, as the protocol
// error it is, rather than leave it waiting for a result that never comes.
TEST(HostileResultTest, AResultForNoLaunchFailsTheWaitingLaunch) {
  ExecutorProcess Exec;
  ExecutorOptions EO;
  EO.Bind = "0"; // TCP in every run: the relay is
  ASSERT_TRUE(Exec.start(EO));
  TamperRelay Relay(Exec.address());
  SessionOptions O;
  O.Transport = TransportKind::Tcp;
  O.LaunchTimeout = paced(5s); // without the check, the launch would wait this long
  auto S = openWithConcat(Relay.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(11);
  auto Ins = byteInputs({64}, Rng);
  ASSERT_TRUE(concatMatches(*S, Ins)) << "honest at first";
  // The sequence number's low byte (header offset 16) of the next result.
  Relay.overwriteNext(TamperRelay::Direction::ToHost, 16, char(0x7f));
  Desc Out(1, 1);
  std::vector<MemrefArg> Args = {{Ins[0]->D.data(), 1, 1}};
  auto Began = std::chrono::steady_clock::now();
  auto [Kind, Msg] =
      failureOf(S->launch({remoteEntry("concat_1"), "concat.o", Args, {{Out.data(), 1, 1}}}));
  EXPECT_TRUE(Relay.tampered());
  EXPECT_EQ(Kind, FailureKind::Other) << Msg;
  EXPECT_TRUE(mentions(Msg, "the executor answered launch 127, which no launch is waiting for"))
      << Msg;
  EXPECT_LT(std::chrono::steady_clock::now() - Began, paced(4s)) << Msg;
}

// What could steer a terminal: C0 controls, DEL, C1 controls (as UTF-8),
// the right-to-left override, and bytes that are not UTF-8.
::testing::AssertionResult fitForATerminal(const std::string &Msg) {
  for (size_t I = 0; I < Msg.size(); ++I) {
    auto C = static_cast<unsigned char>(Msg[I]);
    if (C < 0x20 || C == 0x7f)
      return ::testing::AssertionFailure() << "control byte " << unsigned(C) << " at " << I;
    if (C == 0xc2 && I + 1 < Msg.size() && static_cast<unsigned char>(Msg[I + 1]) < 0xa0)
      return ::testing::AssertionFailure() << "C1 control at " << I;
  }
  if (Msg.find("\xe2\x80\xae") != std::string::npos)
    return ::testing::AssertionFailure() << "a right-to-left override";
  const auto *P = reinterpret_cast<const UTF8 *>(Msg.data());
  if (!isLegalUTF8String(&P, P + Msg.size()))
    return ::testing::AssertionFailure() << "not UTF-8";
  return ::testing::AssertionSuccess();
}

// An executor that has not proved itself may refuse a connection saying
// anything, in up to 4 KiB: escape sequences that retitle the window and
// clear the screen, a NUL, a carriage return, a quote of its own, a C1
// control, bytes that are not UTF-8, a right-to-left override. The host's
// error shows it as the executor's words, quoted, cut, and with none of it
// left to steer a terminal.
TEST(HostileRefusalTest, ARefusalIsQuotedAsTheExecutorsWordsAndCleaned) {
  std::string Reason = std::string("\x1b]0;owned\x07\x1b[2J\x1b[31mno") + '\0' +
                       "hidden\rthe host\" says \xc2\x9b"
                       "31m \xff\xfe\xed\xa0\x80 \xe2\x80\xae"
                       "desrever";
  // The largest refusal the host reads: a 4096-byte body, 9 of them SPS's.
  Reason.resize(4096 - 9, 'A');
  FakeExecutor Refuser([&](int Fd) {
    std::string Frame = wire::encodeHangupFrame(Reason);
    ::send(Fd, Frame.data(), Frame.size(), MSG_NOSIGNAL);
    closedByPeer(Fd);
  });
  auto S = Session::open(Refuser.Address, {});
  ASSERT_FALSE(S);
  std::string Msg = toString(S.takeError());
  EXPECT_TRUE(fitForATerminal(Msg)) << Msg;
  EXPECT_TRUE(mentions(Msg, "the executor refused the connection, saying: "
                            "\"\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mno\\x00hidden\\x0dthe host\\\" "
                            "says \\u009b31m \\xff\\xfe\\xed\\xa0\\x80 \\u202edesreverAAA"))
      << Msg;
  EXPECT_TRUE(mentions(Msg, "AAA\" (the first 512 of 4087 bytes)")) << Msg;
  EXPECT_LT(Msg.size(), 1024u) << Msg;
}

} // namespace
