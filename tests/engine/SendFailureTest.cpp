//===- SendFailureTest.cpp - Results and inputs that cannot be sent -------===//
//
// A launch whose bytes cannot all go over the connection, on either side,
// fails with an error that says why, before anything of it is sent, and the
// session goes on: an executor result larger than the executor's message
// limit, a kernel output over memory that cannot be read, a caller's input
// over memory that cannot be read.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Sockets.h"
#include "Text.h"

#include <cstdlib>
#include <sys/mman.h>
#include <tuple>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

// A session of strategy S with concat.o and hostile.o linked.
std::unique_ptr<Session> openHostile(const std::string &Address, Strategy S,
                                     SessionOptions O = {}) {
  auto Sess = openWithConcat(Address, S, O);
  if (Sess)
    if (auto Err = Sess->sendBinary(kernelObject("hostile"), BinaryFormat::Object)) {
      ADD_FAILURE() << llvm::toString(std::move(Err));
      return nullptr;
    }
  return Sess;
}

// Launches Entry of hostile.o (one rank-1 byte output) and returns the
// failure's text, expecting the output descriptor left zeroed.
std::string failedHostile(Session &S, const std::string &Entry) {
  Desc Out(1, 1);
  Out.poison();
  std::string Msg =
      errorText(S.launch({remoteEntry(Entry), "hostile.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_TRUE(Out.allZero()) << "a failed launch leaves its outputs zeroed";
  return Msg;
}

void expectStillWorks(Session &S) {
  std::mt19937_64 Rng(3);
  EXPECT_TRUE(concatMatches(S, byteInputs({100, 7}, Rng)));
  EXPECT_TRUE(S.connected());
}

// The request is a few hundred bytes; the reply would be 2 MiB against the
// executor's 1 MiB limit. Over TCP: in shared memory a result is no message.
TEST(SendFailureTest, AResultOverTheExecutorsLimitIsAnErrorReply) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--max-message", "1"}}));
  SessionOptions Tcp;
  Tcp.Transport = TransportKind::Tcp;
  auto S = openHostile(Exec.address(), Strategy::ZeroCopy, Tcp);
  ASSERT_TRUE(S);
  std::string Msg = failedHostile(*S, "big_output");
  EXPECT_TRUE(mentions(Msg, "its outputs take 2097152 bytes")) << Msg;
  EXPECT_TRUE(mentions(Msg, "above this executor's limit of 1048576 bytes (--max-message)")) << Msg;
  expectStillWorks(*S);
}

// Sending the output would fail after its first page: the executor finds
// the second page unreadable first and says which it is.
TEST(SendFailureTest, AnUnreadableKernelOutputIsAnErrorReply) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  auto S = openHostile(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(S);
  std::string Msg = failedHostile(*S, "unreadable_output");
  EXPECT_TRUE(mentions(Msg, "kernel output 0: memory at 0x")) << Msg;
  EXPECT_TRUE(mentions(Msg, "is not readable (its values span 8192 bytes")) << Msg;
  expectStillWorks(*S);
}

class UnreadableInputTest : public ::testing::TestWithParam<Strategy> {};

// The host checks its caller's input memory before sending a byte.
TEST_P(UnreadableInputTest, FailsNamingTheInputBeforeSending) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Transport = TransportKind::Tcp; // the kernel counts what went out there
  auto S = openWithConcat(Exec.address(), GetParam(), O);
  ASSERT_TRUE(S);
  ASSERT_TRUE(settle(*S));
  long Page = sysconf(_SC_PAGESIZE);
  char *Mem = static_cast<char *>(
      mmap(nullptr, 2 * Page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(Mem, MAP_FAILED);
  ASSERT_EQ(mprotect(Mem + Page, Page, PROT_NONE), 0);
  std::mt19937_64 Rng(5);
  auto Good = makeInput(Layout::Dense, {16}, 1, Rng);
  Desc Bad(1, 1);
  Bad.setAllocated(Mem);
  Bad.setAligned(Mem);
  Bad.setSize(0, 2 * Page);
  Bad.setStride(0, 1);
  Desc Out(1, 1);
  std::vector<MemrefArg> Ins = {{Good->D.data(), 1, 1}, {Bad.data(), 1, 1}};
  uint64_t Sent = tcpBytesSentTo(Exec.address());
  std::string Msg =
      errorText(S->launch({remoteEntry("concat_2"), "concat.o", Ins, {{Out.data(), 1, 1}}}));
  EXPECT_TRUE(mentions(Msg, "input 1: memory at 0x")) << Msg;
  EXPECT_TRUE(mentions(Msg, "is not readable")) << Msg;
  EXPECT_EQ(tcpBytesSentTo(Exec.address()), Sent) << "nothing may be sent";
  EXPECT_TRUE(Out.allZero());
  munmap(Mem, 2 * Page);
  expectStillWorks(*S);
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, UnreadableInputTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive),
                         [](const ::testing::TestParamInfo<Strategy> &I) {
                           return std::string(strategyTestName(I.param));
                         });

// The host allocates no more than SessionOptions::MaxOutputBytes for one
// launch's outputs, whatever the executor says they take: 2 MiB of values,
// or one byte seen as 32 MiB through a stride of 0, against a 1 MiB cap.
// An executor with --upstream-only, whose outputs the host reads itself,
// is held to it too.
using OutputCapParam = std::tuple<Strategy, bool>;

class OutputCapTest : public ::testing::TestWithParam<OutputCapParam> {};

TEST_P(OutputCapTest, OutputsOverTheCapFailBeforeAnyIsAllocated) {
  auto [Strat, UpstreamOnly] = GetParam();
  ExecutorProcess Exec;
  ExecutorOptions Options;
  Options.UpstreamOnly = UpstreamOnly;
  ASSERT_TRUE(Exec.start(Options));
  SessionOptions Capped;
  Capped.MaxOutputBytes = 1 << 20;
  auto S = openHostile(Exec.address(), Strat, Capped);
  ASSERT_TRUE(S);
  for (const char *Entry : {"big_output", "broadcast_output"}) {
    SCOPED_TRACE(Entry);
    std::string Msg = failedHostile(*S, Entry);
    EXPECT_TRUE(mentions(Msg, "output 0: the executor returned")) << Msg;
    EXPECT_TRUE(mentions(Msg, "more than the 1048576 bytes allowed")) << Msg;
    EXPECT_TRUE(mentions(Msg, "CATALYST_REMOTE_MAX_OUTPUT_MIB")) << Msg;
    expectStillWorks(*S);
  }
  // Under the cap, the same launch goes through.
  SessionOptions Roomy;
  Roomy.MaxOutputBytes = 4 << 20;
  auto R = openHostile(Exec.address(), Strat, Roomy);
  ASSERT_TRUE(R);
  Desc Out(1, 1);
  ASSERT_FALSE(R->launch({remoteEntry("big_output"), "hostile.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_EQ(Out.size(0), 2 << 20);
  std::free(Out.allocated());
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, OutputCapTest,
                         ::testing::Values(OutputCapParam{Strategy::ZeroCopy, false},
                                           OutputCapParam{Strategy::Batched, false},
                                           OutputCapParam{Strategy::Naive, false},
                                           OutputCapParam{Strategy::Naive, true}),
                         [](const ::testing::TestParamInfo<OutputCapParam> &I) {
                           return std::get<1>(I.param)
                                      ? std::string("UpstreamOnly")
                                      : std::string(strategyTestName(std::get<0>(I.param)));
                         });

} // namespace
