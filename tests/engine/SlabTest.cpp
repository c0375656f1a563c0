//===- SlabTest.cpp - Executor memory the host places launches in ---------===//
//
// Zerocopy and batched launches put their buffers in one executor region,
// the slab, which the host reserves once, places every launch in from its
// start (64-byte aligned), and replaces by a larger one when a launch does
// not fit. The counters say how much of it each launch used and the most
// any launch used; replacing it costs round trips only on the launch that
// needs it.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"

#include <algorithm>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

constexpr int64_t MiB = 1 << 20;

class SlabTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }
  ExecutorProcess Exec;
};

// What a zerocopy launch places is exactly its inputs' dense values: packed
// size for a strided view, never its span.
TEST_F(SlabTest, ZeroCopyInUseIsTheAlignedInputBytes) {
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(1);
  auto Ins = byteInputs({1, 63, 64, 65, 200, 0}, Rng);
  Ins.push_back(makeInput(Layout::Strided, {100}, 1, Rng));
  uint64_t Expected = 0;
  for (auto &In : Ins)
    Expected += slabPlace(In->D.numElements());
  // 64 + 64 + 64 + 128 + 256 + 64 (the empty one) + 128 (100 packed bytes)
  ASSERT_EQ(Expected, 768u);
  ASSERT_TRUE(concatMatches(*S, Ins));
  EXPECT_EQ(S->stats().Last.SlabInUse, Expected);
}

// Batched places each input's values, then all descriptors together, then
// the argument area (a pointer per input).
TEST_F(SlabTest, BatchedInUseAddsDescriptorsAndArgumentArea) {
  auto S = openWithConcat(Exec.address(), Strategy::Batched);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(2);
  auto Ins = byteInputs({10, 100, 1000}, Rng);
  ASSERT_TRUE(concatMatches(*S, Ins));
  uint64_t Descriptors = 3 * (3 + 2 * 1) * 8;
  EXPECT_EQ(S->stats().Last.SlabInUse, slabPlace(10) + slabPlace(100) + slabPlace(1000) +
                                           slabPlace(Descriptors) + slabPlace(3 * 8));
}

TEST_F(SlabTest, HighWaterIsTheLargestLaunchSoFar) {
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(3);
  uint64_t Max = 0, PreviousHigh = 0;
  for (int64_t Bytes : {1000, 50000, 300, 50000, 120000, 10, 0}) {
    SCOPED_TRACE(Bytes);
    ASSERT_TRUE(concatMatches(*S, byteInputs({Bytes}, Rng)));
    LaunchStats Last = S->stats().Last;
    Max = std::max(Max, slabPlace(Bytes));
    EXPECT_EQ(Last.SlabInUse, slabPlace(Bytes));
    EXPECT_EQ(Last.SlabHighWater, Max);
    EXPECT_GE(Last.SlabHighWater, PreviousHigh);
    PreviousHigh = Last.SlabHighWater;
  }
  EXPECT_EQ(S->stats().Total.SlabHighWater, Max);
}

// ORC's linker ends with requests of its own from its task threads; the
// session lets them finish before sendBinary returns, so the first launch
// counts its own messages only. Many sessions, since a late request is a
// matter of timing.
TEST_F(SlabTest, TheFirstLaunchIsChargedOnlyItsOwnRequests) {
  for (int Attempt = 0; Attempt < 500; ++Attempt) {
    SCOPED_TRACE(Attempt);
    auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy);
    ASSERT_TRUE(S);
    std::mt19937_64 Rng(Attempt);
    ASSERT_TRUE(concatMatches(*S, byteInputs({100}, Rng)));
    LaunchStats Last = S->stats().Last;
    ASSERT_EQ(Last.RoundTrips, 2u) << "reserve the slab, then launch";
    // In shared memory the executor also passes the slab and its output area.
    uint64_t Passed = S->transport() == TransportKind::Local ? 2 : 0;
    ASSERT_EQ(Last.Messages, 2 * Last.RoundTrips + Passed) << "each request and its reply";
  }
}

class SlabReplacementTest : public SlabTest, public ::testing::WithParamInterface<Strategy> {
protected:
  // What a launch of one input costs when its buffers fit the slab.
  uint64_t steady() const { return steadyTrips(GetParam(), 1); }

  // Launches concat on one input of Bytes and returns its round trips.
  uint64_t tripsFor(Session &S, int64_t Bytes) {
    std::mt19937_64 Rng(Bytes);
    EXPECT_TRUE(concatMatches(S, byteInputs({Bytes}, Rng))) << Bytes << " bytes";
    return S.stats().Last.RoundTrips;
  }

  SessionOptions smallSlab() const {
    SessionOptions O;
    O.SlabInitial = 1 * MiB;
    return O;
  }
};

// Replacing the slab costs two round trips: SlabPool::grow releases the old
// region, then reserves the new one (it never keeps two). A launch that fits
// again costs the usual.
TEST_P(SlabReplacementTest, ALaunchLargerThanTheSlabReplacesIt) {
  auto S = openWithConcat(Exec.address(), GetParam(), smallSlab());
  ASSERT_TRUE(S);
  ASSERT_TRUE(settle(*S));
  // Zerocopy reserves the slab on the first launch with inputs; batched
  // already did on settle's, for its (empty) descriptor and argument areas.
  uint64_t Reserve = GetParam() == Strategy::ZeroCopy ? 1 : 0;
  EXPECT_EQ(tripsFor(*S, 4096), steady() + Reserve);
  EXPECT_EQ(tripsFor(*S, 4096), steady());
  EXPECT_EQ(tripsFor(*S, 3 * MiB), steady() + 2) << "release the 1 MiB slab, reserve 3 MiB";
  EXPECT_EQ(tripsFor(*S, 3 * MiB), steady());
  EXPECT_EQ(tripsFor(*S, 4096), steady()) << "the slab is never shrunk";
}

// The replacement is at least twice the old size, so a slowly growing
// workload replaces it a logarithmic number of times.
TEST_P(SlabReplacementTest, ReplacementsDoubleTheSlab) {
  auto S = openWithConcat(Exec.address(), GetParam(), smallSlab());
  ASSERT_TRUE(S);
  ASSERT_TRUE(settle(*S));
  tripsFor(*S, 4096); // reserves the 1 MiB slab, as counted above
  // The first replacement is sized to the need: 3 MiB (and batched's small
  // areas). The next, for 4 MiB, doubles that to 6 MiB, which 5 MiB then
  // fits and 7 MiB does not.
  EXPECT_EQ(tripsFor(*S, 3 * MiB), steady() + 2);
  EXPECT_EQ(tripsFor(*S, 4 * MiB), steady() + 2);
  EXPECT_EQ(tripsFor(*S, 5 * MiB), steady());
  EXPECT_EQ(tripsFor(*S, 7 * MiB), steady() + 2);
}

INSTANTIATE_TEST_SUITE_P(Slabbed, SlabReplacementTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched),
                         [](const auto &Info) { return strategyTestName(Info.param); });

} // namespace
