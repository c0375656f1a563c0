//===- LaunchMatrixTest.cpp - Every element size, rank and input layout ---===//
//
// Each input layout, at every rank 0-4 and element size 1-16, goes through
// two kernels: `map` reads it through its strides into a dense result, and
// `relayout` hands its values back in a non-dense buffer. Both run with
// every transfer strategy (zerocopy, batched, naive, and the naive fallback
// against an --upstream-only executor) and must match the same kernels run
// locally.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"

#include <tuple>

using namespace catalyst::remote::test;

namespace {

const std::vector<int64_t> BaseSizes = {3, 4, 5, 2};

std::vector<int64_t> sizesOfRank(size_t Rank) {
  return std::vector<int64_t>(BaseSizes.begin(), BaseSizes.begin() + Rank);
}

using MatrixParam = std::tuple<Mode, Layout>;

std::string paramName(const ::testing::TestParamInfo<MatrixParam> &Info) {
  return std::string(modeName(std::get<0>(Info.param))) + layoutName(std::get<1>(Info.param));
}

class LaunchMatrixTest : public CapiTest, public ::testing::WithParamInterface<MatrixParam> {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startAndOpen(std::get<0>(GetParam())));
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
    ASSERT_NO_FATAL_FAILURE(sendKernel("relayout"));
  }

  Layout layout() const { return std::get<1>(GetParam()); }

  // Runs both kernels on one input and checks them; counts what ran.
  void checkOne(size_t Rank, size_t ElemSize) {
    SCOPED_TRACE("rank " + std::to_string(Rank) + ", element size " + std::to_string(ElemSize));
    auto In = makeInput(layout(), sizesOfRank(Rank), ElemSize, Rng);
    std::vector<OutSpec> Out = {{Rank, ElemSize}};
    EXPECT_TRUE(
        checkLaunch(Session.get(), "map", rankSizeEntry("map", Rank, ElemSize), {&In->D}, Out));
    EXPECT_TRUE(checkLaunch(Session.get(), "relayout", rankSizeEntry("relayout", Rank, ElemSize),
                            {&In->D}, Out));
    expectRelayoutKeepsValues(*In);
    ++Checked;
  }

  // relayout returns its input's values: checked without any kernel run
  // locally, against the values the test itself put in.
  void expectRelayoutKeepsValues(Input &In) {
    Outputs Remote({{In.D.rank(), In.D.elemSize()}});
    ASSERT_TRUE(launchRemote(Session.get(),
                             remoteEntry(rankSizeEntry("relayout", In.D.rank(), In.D.elemSize())),
                             "relayout.o", {&In.D}, Remote))
        << FailureLog::last();
    EXPECT_EQ(Remote[0].sizes(), In.D.sizes());
    EXPECT_EQ(Remote[0].values(), In.D.values());
  }

  std::mt19937_64 Rng{1234};
  size_t Checked = 0;
};

TEST_P(LaunchMatrixTest, MatchesLocalRun) {
  for (size_t Rank = 0; Rank <= MaxTestRank; ++Rank)
    for (size_t ElemSize : ElemSizes)
      if (layoutApplies(layout(), Rank))
        checkOne(Rank, ElemSize);
  EXPECT_GE(Checked, 5u * 3) << "too few combinations ran";
  EXPECT_TRUE(FailureLog::all().empty()) << FailureLog::all().front();
}

constexpr Layout AllLayouts[] = {Layout::Dense,      Layout::Offset,    Layout::Strided,
                                 Layout::Transposed, Layout::Broadcast, Layout::Reversed,
                                 Layout::ZeroSize};

INSTANTIATE_TEST_SUITE_P(AllModesAndLayouts, LaunchMatrixTest,
                         ::testing::Combine(::testing::ValuesIn(AllModes),
                                            ::testing::ValuesIn(AllLayouts)),
                         paramName);

// A transposed view of 16 MiB: a send packs it whole, in source order and
// around the cache, into the slab or into TCP scratch of its size (more than
// the usual 1 MiB; MemrefPackerTest covers the packing in pieces).
class LargeTransposedTest : public ModeTest {};

TEST_P(LargeTransposedTest, MatchesLocalRun) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  std::mt19937_64 Rng(77);
  auto In = makeInput(Layout::Transposed, {64, 64, 512}, 8, Rng);
  ASSERT_TRUE(checkLaunch(Session.get(), "map", rankSizeEntry("map", 3, 8), {&In->D}, {{3, 8}}))
      << FailureLog::last();
}

INSTANTIATE_TEST_SUITE_P(AllModes, LargeTransposedTest, ::testing::ValuesIn(AllModes),
                         modeTestName);

// Every strategy side by side on the same inputs: identical bytes. Each
// needs an executor of its own, since one address is one session.
class ProtocolParityTest : public CapiTest {
protected:
  void openAll() {
    for (Mode M : AllModes) {
      Execs.push_back(std::make_unique<ExecutorProcess>());
      ExecutorOptions Options;
      Options.UpstreamOnly = M == Mode::UpstreamOnly;
      ASSERT_TRUE(Execs.back()->start(Options));
      ScopedEnv Ask("CATALYST_REMOTE_STRATEGY",
                    M == Mode::UpstreamOnly ? nullptr : expectedStrategy(M));
      ScopedEnv Over("CATALYST_REMOTE_TRANSPORT", expectedTransport(M));
      Sessions.push_back(std::make_unique<ScopedSession>(
          __catalyst__remote__open(Execs.back()->address().c_str())));
      int64_t H = Sessions.back()->get();
      ASSERT_GT(H, 0) << FailureLog::last();
      ASSERT_EQ(strategyOf(H), expectedStrategy(M));
      ASSERT_EQ(transportOf(H), expectedTransport(M));
      ASSERT_EQ(__catalyst__remote__send_binary(H, kernelObject("map").c_str(), 0), 0);
    }
  }

  // Launches map on In in every session; the first result is the reference.
  void compareAll(Input &In) {
    size_t Rank = In.D.rank(), E = In.D.elemSize();
    std::string Entry = remoteEntry(rankSizeEntry("map", Rank, E));
    std::vector<std::unique_ptr<Outputs>> Results;
    for (size_t K = 0; K < Sessions.size(); ++K) {
      Results.push_back(std::make_unique<Outputs>(std::vector<OutSpec>{{Rank, E}}));
      ASSERT_TRUE(launchRemote(Sessions[K]->get(), Entry, "map.o", {&In.D}, *Results.back()))
          << modeName(AllModes[K]) << ": " << FailureLog::last();
      EXPECT_TRUE((*Results.back())[0].isDenseRowMajor()) << modeName(AllModes[K]);
      EXPECT_EQ((*Results.back())[0].sizes(), (*Results[0])[0].sizes()) << modeName(AllModes[K]);
      EXPECT_EQ((*Results.back())[0].values(), (*Results[0])[0].values())
          << modeName(AllModes[K]) << " differs from " << modeName(AllModes[0]);
    }
  }

  std::vector<std::unique_ptr<ExecutorProcess>> Execs;
  std::vector<std::unique_ptr<ScopedSession>> Sessions;
};

TEST_F(ProtocolParityTest, AllStrategiesReturnIdenticalBytes) {
  ASSERT_NO_FATAL_FAILURE(openAll());
  std::mt19937_64 Rng(99);
  size_t Compared = 0;
  for (Layout L : AllLayouts)
    for (size_t Rank = 0; Rank <= MaxTestRank; ++Rank)
      for (size_t E : ElemSizes) {
        if (!layoutApplies(L, Rank))
          continue;
        SCOPED_TRACE(std::string(layoutName(L)) + " rank " + std::to_string(Rank) + " size " +
                     std::to_string(E));
        auto In = makeInput(L, sizesOfRank(Rank), E, Rng);
        ASSERT_NO_FATAL_FAILURE(compareAll(*In));
        ++Compared;
      }
  EXPECT_GT(Compared, 100u);
}

} // namespace
