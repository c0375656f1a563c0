//===- LimitsTest.cpp - Launches over a limit, or on bad descriptors ------===//
//
// A launch that breaks a limit (message size on either side, the slab cap)
// or describes an impossible memref fails with an error saying which, and
// costs nothing it does not have to: what the host can check, it checks
// before a byte leaves, and the session goes on. The executor's own limit
// can only be found out by sending; it drops that connection, not itself.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Sockets.h"
#include "Text.h"

#include <climits>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

constexpr int64_t MiB = 1 << 20;

// Launches concat on Ins, expecting a failure; returns its text.
std::string failedConcat(Session &S, const std::vector<std::unique_ptr<Input>> &Ins) {
  auto R = concatMatches(S, Ins);
  EXPECT_FALSE(R) << "the launch should have failed";
  return R ? "" : R.message();
}

const Strategy AllStrategies[] = {Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive};

std::string strategyParamName(const ::testing::TestParamInfo<Strategy> &Info) {
  return strategyTestName(Info.param);
}

// The executor refuses a message over its --max-message: it cannot skip it
// unread, so it drops the connection; the listener and its other
// connections are untouched. Launches Bytes against a 1 MiB limit, over
// TCP: in shared memory a payload is no message (--max-slab-mib bounds it).
void expectOversizedLaunchDropsOnlyItsConnection(int64_t Bytes) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start({false, {}, {}, {"--max-message", "1"}}));
  SessionOptions Tcp;
  Tcp.Transport = TransportKind::Tcp;
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, Tcp);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(1);
  ASSERT_TRUE(concatMatches(*S, byteInputs({4096}, Rng)));

  std::string Msg = failedConcat(*S, byteInputs({Bytes}, Rng));
  // The executor says why before it goes.
  EXPECT_TRUE(mentions(Msg, "the limit is 1048576")) << Msg;
  EXPECT_TRUE(mentions(Msg, "closed")) << Msg;
  EXPECT_FALSE(S->connected());

  auto Again = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(Again);
  EXPECT_TRUE(concatMatches(*Again, byteInputs({4096}, Rng)));
}

// The message fits the socket buffers, so the host's send completes and
// its reader finds the connection closed.
TEST(ExecutorLimitTest, AnOversizedLaunchDropsOnlyThatConnection) {
  expectOversizedLaunchDropsOnlyItsConnection(2 * MiB);
}

// Larger than the socket buffers: the executor takes in and drops the rest
// of the message after refusing it, so the host's send completes and the
// reason arrives instead of a reset.
TEST(ExecutorLimitTest, AnOversizedLaunchTooLargeToBufferSaysWhy) {
  expectOversizedLaunchDropsOnlyItsConnection(16 * MiB);
}

class LimitTest : public ::testing::TestWithParam<Strategy> {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }

  // Opens a session and launches once, so that what the test then measures
  // is not the slab's first reservation.
  // Over TCP: the kernel counts what went out there (wireBytes()).
  std::unique_ptr<Session> warmSession(SessionOptions O = {}) {
    O.Transport = TransportKind::Tcp;
    auto S = openWithConcat(Exec.address(), GetParam(), O);
    if (S) {
      EXPECT_TRUE(concatMatches(*S, byteInputs({100}, Rng)));
    }
    return S;
  }

  uint64_t wireBytes() { return tcpBytesSentTo(Exec.address()); }

  // The session still launches correctly, at its steady cost.
  void expectStillWorks(Session &S) {
    auto Before = S.stats().Launches;
    EXPECT_TRUE(concatMatches(S, byteInputs({100, 7}, Rng)));
    EXPECT_EQ(S.stats().Launches, Before + 1);
    EXPECT_EQ(S.stats().Last.RoundTrips, steadyTrips(GetParam(), 2));
    EXPECT_TRUE(S.connected());
  }

  ExecutorProcess Exec;
  std::mt19937_64 Rng{7};
};

// The host checks its own message limit before a launch sends anything, so
// an oversized one never leaves, whatever the strategy.
TEST_P(LimitTest, HostMessageLimitStopsTheMessage) {
  SessionOptions O;
  O.MaxMessageSize = 1 * MiB;
  auto S = warmSession(O);
  ASSERT_TRUE(S);
  uint64_t Sent = wireBytes();
  failedConcat(*S, byteInputs({2 * MiB}, Rng));
  EXPECT_EQ(wireBytes() - Sent, 0u);
  expectStillWorks(*S);
}

// The error names the limit, and only this launch reports it.
class HostLimitMessageTest : public LimitTest {};

TEST_P(HostLimitMessageTest, ErrorNamesTheLimit) {
  SessionOptions O;
  O.MaxMessageSize = 1 * MiB;
  auto S = warmSession(O);
  ASSERT_TRUE(S);
  std::string Msg = failedConcat(*S, byteInputs({2 * MiB}, Rng));
  EXPECT_TRUE(mentions(Msg, "the limit is 1048576")) << Msg;
  Desc Out(1, 1);
  std::string Later = errorText(S->launch({"no_such_entry", "concat.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_FALSE(mentions(Later, "limit")) << Later;
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, HostLimitMessageTest, ::testing::ValuesIn(AllStrategies),
                         strategyParamName);

// Descriptors whose arithmetic overflows are refused while planning, naming
// the input. No round trip is spent: the kernel's count of bytes sent does
// not move. (The session's stats cannot show that: a failed launch is not
// recorded in them at all, which is checked too.)
struct Overflow {
  const char *What;
  std::vector<int64_t> Sizes, Strides;
  size_t ElemSize;
};

const Overflow Overflows[] = {
    {"overflows the address range", {INT64_MAX / 2}, {4}, 1},
    {"overflows the address range", {INT64_MAX / 2}, {-4}, 1},
    {"byte size overflows", {INT64_MAX / 2}, {1}, 4},
    {"element count overflows", {INT64_MAX / 2, 8}, {8, 1}, 1},
    // Offsets 0 to INT64_MAX, then INT64_MIN: a span of 2^64 elements, which
    // wrapped to none.
    {"the span of its elements", {2, 2}, {INT64_MAX, INT64_MIN}, 1},
};

TEST_P(LimitTest, OverflowingDescriptorsAreRefusedWithoutARoundTrip) {
  auto S = warmSession();
  ASSERT_TRUE(S);
  for (const Overflow &O : Overflows) {
    SCOPED_TRACE(O.What);
    auto Good = makeInput(Layout::Dense, {16}, 1, Rng);
    Desc Bad(O.Sizes.size(), O.ElemSize);
    Bad.setAllocated(Good->Buf.data());
    Bad.setAligned(Good->Buf.data());
    for (size_t D = 0; D < O.Sizes.size(); ++D) {
      Bad.setSize(D, O.Sizes[D]);
      Bad.setStride(D, O.Strides[D]);
    }
    SessionStats Before = S->stats();
    uint64_t Sent = wireBytes();
    Desc Out(1, 1);
    std::vector<MemrefArg> Ins = {{Good->D.data(), 1, 1}, {Bad.data(), Bad.rank(), O.ElemSize}};
    std::string Entry = remoteEntry("concat_2");
    std::string Msg = errorText(S->launch({Entry, "concat.o", Ins, {{Out.data(), 1, 1}}}));
    EXPECT_TRUE(mentions(Msg, "input 1: ")) << Msg;
    EXPECT_TRUE(mentions(Msg, O.What)) << Msg;
    EXPECT_TRUE(Out.allZero());
    EXPECT_EQ(wireBytes(), Sent) << "nothing may be sent";
    EXPECT_EQ(S->stats().Launches, Before.Launches);
    EXPECT_EQ(S->stats().Total.RoundTrips, Before.Total.RoundTrips);
  }
  expectStillWorks(*S);
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, LimitTest, ::testing::ValuesIn(AllStrategies),
                         strategyParamName);

// A launch that needs more slab than SlabCap allows fails before the host
// gives up the slab it has; the next launch that fits uses that slab at the
// steady cost, reserving nothing.
class SlabCapTest : public LimitTest {};

TEST_P(SlabCapTest, ALaunchOverTheCapFailsAndKeepsTheSlab) {
  SessionOptions O;
  O.SlabInitial = 1 * MiB;
  O.SlabCap = 2 * MiB;
  auto S = warmSession(O);
  ASSERT_TRUE(S);
  uint64_t Sent = wireBytes();
  std::string Msg = failedConcat(*S, byteInputs({3 * MiB}, Rng));
  EXPECT_TRUE(mentions(Msg, "the slab cap is 2097152 (SessionOptions::SlabCap)")) << Msg;
  EXPECT_EQ(wireBytes(), Sent) << "nothing may be sent";
  ASSERT_TRUE(concatMatches(*S, byteInputs({MiB / 2}, Rng)));
  EXPECT_EQ(S->stats().Last.RoundTrips, steadyTrips(GetParam(), 1));
  expectStillWorks(*S);
}

INSTANTIATE_TEST_SUITE_P(Slabbed, SlabCapTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched),
                         strategyParamName);

} // namespace
