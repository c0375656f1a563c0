//===- PoolProgramTest.cpp - A compiled program against a pool ------------===//
//
// A Catalyst-compiled program keeps its calls and names a pool where it
// named an executor: four executors announce themselves in a directory,
// and the program (compiled from MLIR, calling __catalyst__executor__*
// as Catalyst's lowering does) and the C ABI's launches, blocking and
// asynchronous, get every result right across them.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "TempDir.h"

extern "C" {
// compiled_program.mlir: open, send_binary, launch, close.
void catalyst_test_program(const char *Addr, const char *Object, const char *Entry,
                           int64_t NumInputs, void *const *Inputs, const size_t *InputRanks,
                           const size_t *InputElemSizes, int64_t NumOutputs, void *const *Outputs,
                           const size_t *OutputRanks, const size_t *OutputElemSizes);
}

using namespace catalyst::remote::test;

namespace {

const std::vector<int64_t> BaseSizes = {3, 4, 5, 2};
constexpr Layout Layouts[] = {Layout::Dense,      Layout::Offset,   Layout::Strided,
                              Layout::Transposed, Layout::Reversed, Layout::ZeroSize};

class PoolProgramTest : public CapiTest {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    for (auto &E : Members) {
      ExecutorOptions EO;
      EO.Bind = "127.0.0.1:0";
      EO.Args = {"--announce", Dir.dir()};
      ASSERT_TRUE(E.start(EO));
    }
  }

  std::string address() const { return "pool:" + Dir.dir(); }

  TempDir Dir;
  ExecutorProcess Members[4];
  // Every launch must find all four: the pool's open waits for them.
  ScopedEnv Min{"CATALYST_REMOTE_POOL_MIN", "4"};
  std::mt19937_64 Rng{11};
};

TEST_F(PoolProgramTest, TheCompiledProgramRunsRightAgainstAPool) {
  for (size_t Rank = 1; Rank <= 3; ++Rank)
    for (Layout L : Layouts) {
      SCOPED_TRACE(std::string(layoutName(L)) + ", rank " + std::to_string(Rank));
      if (!layoutApplies(L, Rank))
        continue;
      auto In =
          makeInput(L, std::vector<int64_t>(BaseSizes.begin(), BaseSizes.begin() + Rank), 8, Rng);
      Outputs Remote({{Rank, 8}}), Local({{Rank, 8}});
      Remote[0].poison();
      std::string Entry = rankSizeEntry("map", Rank, 8);
      void *InDesc = In->D.data();
      size_t InRank = Rank, InSize = 8;
      auto OutDescs = Remote.descs();
      auto OutRanks = Remote.ranks();
      auto OutSizes = Remote.elemSizes();
      try {
        catalyst_test_program(address().c_str(), kernelObject("map").c_str(),
                              remoteEntry(Entry).c_str(), 1, &InDesc, &InRank, &InSize, 1,
                              OutDescs.data(), OutRanks.data(), OutSizes.data());
      } catch (const std::exception &E) {
        FAIL() << E.what();
      }
      runLocal(hostEntry("map", Entry), {&In->D}, Local);
      EXPECT_TRUE(sameOutputs(Remote, Local));
    }
}

// One handle, many launches: blocking ones spread over the members, and
// asynchronous ones in flight on several at once, each awaited for its own.
TEST_F(PoolProgramTest, LaunchesThroughOneHandleAreRightOnEveryMember) {
  Session.reset(__catalyst__remote__open(address().c_str()));
  ASSERT_GT(Session.get(), 0) << FailureLog::last();
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  for (int I = 0; I < 12; ++I) {
    auto In = makeInput(Layout::Strided, {3, 4}, 8, Rng);
    EXPECT_TRUE(checkLaunch(Session.get(), "map", rankSizeEntry("map", 2, 8), {&In->D}, {{2, 8}}));
  }
  std::vector<std::unique_ptr<Input>> Ins;
  std::vector<std::unique_ptr<Outputs>> Outs;
  std::vector<int64_t> Tokens;
  for (int I = 0; I < 8; ++I) {
    Ins.push_back(makeInput(Layout::Reversed, {64}, 8, Rng));
    Outs.push_back(std::make_unique<Outputs>(std::vector<OutSpec>{{1, 8}}));
    Tokens.push_back(launchRemoteAsync(Session.get(), remoteEntry(rankSizeEntry("map", 1, 8)),
                                       "map.o", {&Ins.back()->D}, *Outs.back()));
    ASSERT_NE(Tokens.back(), 0) << FailureLog::last();
  }
  for (size_t I = 0; I < Tokens.size(); ++I) {
    __catalyst__remote__await(Tokens[I]);
    Outputs Local({{1, 8}});
    runLocal(hostEntry("map", rankSizeEntry("map", 1, 8)), {&Ins[I]->D}, Local);
    EXPECT_TRUE(sameOutputs(*Outs[I], Local)) << "launch " << I;
  }
  catalyst_remote_stats S = statsOf(Session.get());
  EXPECT_EQ(S.launches, 20u);
  EXPECT_EQ(FailureLog::count(), 0u) << FailureLog::last();
}

} // namespace
