//===- OutputForecastTest.cpp - Output buffers ready before they arrive ---===//
//
// A launch of the entry launched before, with outputs of the same sizes,
// receives into buffers the session allocated and faulted in while the
// launch ran (LaunchStats::OutputsReady counts them). Every buffer comes
// from the caller's allocator and is the caller's to release; a wrong
// guess is released by the session before the launch returns.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"

#include <atomic>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

// Buffers the allocator handed out and not yet got back.
std::atomic<int64_t> Outstanding{0};
void *countedAlloc(size_t Bytes) {
  ++Outstanding;
  return std::malloc(Bytes);
}
void countedRelease(void *P) {
  --Outstanding;
  std::free(P);
}

class OutputForecastTest : public ::testing::TestWithParam<Strategy> {
protected:
  void SetUp() override {
    Outstanding = 0;
    ASSERT_TRUE(Exec.start());
    SessionOptions O;
    O.Outputs = {countedAlloc, countedRelease};
    Sess = openWithConcat(Exec.address(), GetParam(), O);
    ASSERT_TRUE(Sess);
  }

  // Launches concat_1 on Bytes bytes; the output's buffer, released, and
  // how many outputs came into ready buffers.
  ::testing::AssertionResult launch(int64_t Bytes, uint64_t &Ready,
                                    llvm::MutableArrayRef<char> Into = {}) {
    std::mt19937_64 Rng(Bytes);
    auto Ins = byteInputs({Bytes}, Rng);
    MemrefArg In{Ins[0]->D.data(), 1, 1};
    Desc Out(1, 1);
    MemrefArg OutArg{Out.data(), 1, 1};
    llvm::MutableArrayRef<char> Lent[] = {Into};
    std::string Entry = remoteEntry("concat_1");
    LaunchCall Call{Entry, "concat.o", In, OutArg};
    if (Into.data())
      Call.Into = Lent;
    if (auto Err = Sess->launch(Call))
      return ::testing::AssertionFailure() << llvm::toString(std::move(Err));
    Ready = Sess->stats().Last.OutputsReady;
    std::vector<uint8_t> Got = Out.values();
    bool Right =
        Out.size(0) == Bytes && (Bytes == 0 || Got[0] == uint8_t(Ins[0]->D.values()[0] + 1));
    if (Out.allocated() != Into.data())
      countedRelease(Out.allocated());
    return Right ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "wrong output";
  }

  ExecutorProcess Exec;
  std::unique_ptr<Session> Sess;
};

TEST_P(OutputForecastTest, ALaunchLikeTheLastGetsItsOutputReady) {
  uint64_t Ready = 99;
  ASSERT_TRUE(launch(4 << 20, Ready));
  EXPECT_EQ(Ready, 0u) << "nothing to go by yet";
  ASSERT_TRUE(launch(4 << 20, Ready));
  EXPECT_EQ(Ready, 1u);
  EXPECT_EQ(Outstanding, 0) << "every buffer back with the allocator";
}

TEST_P(OutputForecastTest, AWrongGuessIsReleased) {
  uint64_t Ready = 99;
  ASSERT_TRUE(launch(4 << 20, Ready));
  ASSERT_TRUE(launch(3 << 20, Ready));
  EXPECT_EQ(Ready, 0u);
  EXPECT_EQ(Outstanding, 0) << "the 4 MiB guess was given back";
  ASSERT_TRUE(launch(3 << 20, Ready));
  EXPECT_EQ(Ready, 1u) << "the sizes just seen are the next guess";
  EXPECT_EQ(Outstanding, 0);
}

TEST_P(OutputForecastTest, SmallOrLentOutputsAreNotGuessed) {
  uint64_t Ready = 99;
  ASSERT_TRUE(launch(64 << 10, Ready));
  ASSERT_TRUE(launch(64 << 10, Ready));
  EXPECT_EQ(Ready, 0u) << "below a MiB the guess would cost more than it saves";
  std::vector<char> Mine(4 << 20);
  ASSERT_TRUE(launch(4 << 20, Ready, Mine));
  ASSERT_TRUE(launch(4 << 20, Ready, Mine));
  EXPECT_EQ(Ready, 0u) << "a lent buffer needs no other";
  EXPECT_EQ(Outstanding, 0);
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, OutputForecastTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive),
                         [](const auto &Info) { return strategyTestName(Info.param); });

} // namespace
