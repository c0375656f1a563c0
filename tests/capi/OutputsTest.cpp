//===- OutputsTest.cpp - What kernels hand back ---------------------------===//
//
// Outputs that are constant globals, that share a buffer, that alias an
// input, that run backwards, that are empty, and many of them at once. Each
// runs with every transfer strategy: whoever frees kernel buffers on the executor
// must free each exactly once and never a constant or an input, or the
// repeated launches below bring the connection process down.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"

#include <numeric>

using namespace catalyst::remote::test;

namespace {

// Enough launches that a double free or a free of a non-heap pointer aborts
// the connection process (glibc checks both) and shows up as a failure.
constexpr int Repeats = 50;

class OutputsTest : public ModeTest {
protected:
  std::vector<int32_t> iota32(int32_t N, int32_t From) {
    std::vector<int32_t> V(N);
    std::iota(V.begin(), V.end(), From);
    return V;
  }
};

TEST_P(OutputsTest, ConstantGlobalComesBackInAFreshBuffer) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("constant"));
  auto In = makeDenseInput<int32_t>({4}, {1, -2, 3, 40});
  for (int I = 0; I < Repeats; ++I) {
    Outputs Out({{2, 4}, {1, 4}});
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("constant"), "constant.o", {&In->D}, Out))
        << "launch " << I << ": " << FailureLog::last();
    ASSERT_NE(reinterpret_cast<uintptr_t>(Out[0].allocated()), ConstantMarker);
    ASSERT_TRUE(Out[0].isDenseRowMajor());
    EXPECT_EQ(Out[0].sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(as<int32_t>(Out[0].values()),
              (std::vector<int32_t>{11, -22, 33, -44, 55, 0x7fffffff}));
    EXPECT_EQ(as<int32_t>(Out[1].values()), (std::vector<int32_t>{2, -4, 6, 80}));
  }
  EXPECT_TRUE(checkLaunch(Session.get(), "constant", "constant", {&In->D}, {{2, 4}, {1, 4}}));
}

TEST_P(OutputsTest, TwoOutputsSharingOneBuffer) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("alias"));
  auto In = makeDenseInput<int32_t>({7}, iota32(7, 1));
  for (int I = 0; I < Repeats; ++I) {
    Outputs Out({{1, 4}, {1, 4}});
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("alias_split"), "alias.o", {&In->D}, Out))
        << "launch " << I << ": " << FailureLog::last();
    EXPECT_EQ(as<int32_t>(Out[0].values()), (std::vector<int32_t>{28, 35, 42, 49}));
    EXPECT_EQ(as<int32_t>(Out[1].values()), (std::vector<int32_t>{7, 14, 21}));
    // Each output is the caller's to free: they may not share a host buffer.
    EXPECT_NE(Out[0].allocated(), Out[1].allocated());
  }
  EXPECT_TRUE(checkLaunch(Session.get(), "alias", "alias_split", {&In->D}, {{1, 4}, {1, 4}}));
}

TEST_P(OutputsTest, OutputsAliasingAnInput) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("alias"));
  auto In = makeDenseInput<int32_t>({6}, iota32(6, 10));
  for (int I = 0; I < Repeats; ++I) {
    Outputs Out({{1, 4}, {1, 4}, {1, 4}});
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("alias_input"), "alias.o", {&In->D}, Out))
        << "launch " << I << ": " << FailureLog::last();
    EXPECT_EQ(as<int32_t>(Out[0].values()), iota32(6, 10));
    EXPECT_EQ(as<int32_t>(Out[1].values()), (std::vector<int32_t>{11, 13, 15}));
    EXPECT_EQ(as<int32_t>(Out[2].values()), iota32(6, 11));
    // The host's own input buffer is never handed back as an output.
    for (size_t K = 0; K < Out.size(); ++K)
      EXPECT_NE(Out[K].allocated(), In->D.allocated()) << "output " << K;
  }
  // The input itself is untouched.
  EXPECT_EQ(as<int32_t>(In->D.values()), iota32(6, 10));
  EXPECT_TRUE(
      checkLaunch(Session.get(), "alias", "alias_input", {&In->D}, {{1, 4}, {1, 4}, {1, 4}}));
}

TEST_P(OutputsTest, EightInputsThreeOutputs) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("multi"));
  std::mt19937_64 Rng(7);
  std::vector<std::unique_ptr<Input>> Ins;
  for (int K = 0; K < 4; ++K)
    Ins.push_back(makeInput(K % 2 ? Layout::Strided : Layout::Dense, {9}, 8, Rng));
  Ins.push_back(makeInput(Layout::Transposed, {3, 5}, 4, Rng));
  Ins.push_back(makeInput(Layout::Offset, {}, 8, Rng));
  Ins.push_back(makeInput(Layout::Reversed, {2, 3, 4}, 1, Rng));
  Ins.push_back(makeInput(Layout::Broadcast, {3}, 16, Rng));
  InputList List;
  for (auto &In : Ins)
    List.push_back(&In->D);
  ASSERT_EQ(List.size(), 8u);
  EXPECT_TRUE(checkLaunch(Session.get(), "multi", "multi", List, {{1, 8}, {2, 4}, {0, 8}}));

  Outputs Out({{1, 8}, {2, 4}, {0, 8}});
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("multi"), "multi.o", List, Out));
  EXPECT_EQ(Out[0].sizes(), (std::vector<int64_t>{9}));
  EXPECT_EQ(Out[1].sizes(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(Out[2].values().size(), 8u);
}

TEST_P(OutputsTest, NegativeStrideOutputs) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("reverse"));
  auto In = makeDenseInput<int16_t>({5}, {1, 2, 3, 4, 5});
  Outputs Out({{1, 2}});
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("reverse_r1_e2"), "reverse.o", {&In->D}, Out))
      << FailureLog::last();
  EXPECT_TRUE(Out[0].isDenseRowMajor());
  EXPECT_EQ(as<int16_t>(Out[0].values()), (std::vector<int16_t>{5, 4, 3, 2, 1}));

  std::mt19937_64 Rng(3);
  auto Matrix = makeInput(Layout::Strided, {4, 3}, 8, Rng);
  EXPECT_TRUE(checkLaunch(Session.get(), "reverse", "reverse_r2_e8", {&Matrix->D}, {{2, 8}}));
}

TEST_P(OutputsTest, ZeroSizeInputsAndOutputs) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
  for (std::vector<int64_t> Sizes : {std::vector<int64_t>{0}, {0, 4}, {3, 0}, {2, 0, 5, 0}}) {
    SCOPED_TRACE(describe(Sizes));
    // No elements: a null data pointer is valid.
    Input In(Sizes.size(), 4, 0);
    for (size_t D = 0; D < Sizes.size(); ++D)
      In.D.setSize(D, Sizes[D]);
    Outputs Out({{Sizes.size(), 4}});
    Out[0].poison();
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry(rankSizeEntry("map", Sizes.size(), 4)),
                             "map.o", {&In.D}, Out))
        << FailureLog::last();
    EXPECT_EQ(Out[0].sizes(), Sizes);
    EXPECT_EQ(Out[0].numElements(), 0);
    EXPECT_TRUE(Out[0].isDenseRowMajor());
  }
}

// launch_into: an output lands in the caller's buffer when it fits, and in a
// fresh one when the buffer is too small or absent; a lent buffer that does
// not fit is left as it was.
TEST_P(OutputsTest, LentBuffersReceiveTheOutputsThatFit) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("alias"));
  std::vector<int32_t> Same(6, -1), Small(2, -1);
  for (int I = 0; I < 3; ++I) {
    // Output 2 (in + 1) goes back into the input's own buffer: in place.
    auto In = makeDenseInput<int32_t>({6}, iota32(6, 10));
    Outputs Out({{1, 4}, {1, 4}, {1, 4}});
    Out.keep(Same.data());
    Out.keep(In->D.allocated());
    std::vector<LentBuffer> Into{{Same.data(), 24}, {Small.data(), 8}, {In->D.allocated(), 24}};
    ASSERT_TRUE(
        launchRemote(Session.get(), remoteEntry("alias_input"), "alias.o", {&In->D}, Out, Into))
        << "launch " << I << ": " << FailureLog::last();
    EXPECT_EQ(Out[0].allocated(), Same.data());
    EXPECT_EQ(as<int32_t>(Out[0].values()), iota32(6, 10));
    EXPECT_NE(Out[1].allocated(), Small.data());
    EXPECT_EQ(as<int32_t>(Out[1].values()), (std::vector<int32_t>{11, 13, 15}));
    EXPECT_EQ(Small, (std::vector<int32_t>{-1, -1}));
    EXPECT_EQ(Out[2].allocated(), In->D.allocated());
    EXPECT_EQ(as<int32_t>(Out[2].values()), iota32(6, 11));
    for (size_t K = 0; K < Out.size(); ++K) {
      EXPECT_TRUE(Out[K].isDenseRowMajor()) << "output " << K;
      EXPECT_EQ(Out[K].offset(), 0) << "output " << K;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, OutputsTest, ::testing::ValuesIn(AllModes), modeTestName);

// When a fresh output cannot be allocated, the launch fails, every output
// descriptor is zeroed, the fresh buffers obtained before the failure are
// released exactly once, a lent buffer is never released, and the session
// goes on. The allocator grants the first Granted requests and refuses the
// rest, recording what it handed out and what came back.
size_t Granted = 0;
std::vector<void *> Given, Released;
void *grantThenRefuse(size_t Bytes) {
  if (Given.size() == Granted)
    return nullptr;
  Given.push_back(std::malloc(Bytes));
  return Given.back();
}
void recordRelease(void *P) {
  Released.push_back(P);
  std::free(P);
}

class OutputAllocatorFailureTest : public ModeTest {
protected:
  void SetUp() override {
    __catalyst__remote__set_output_allocator(&grantThenRefuse, &recordRelease);
    ModeTest::SetUp();
  }
  void TearDown() override {
    ModeTest::TearDown();
    __catalyst__remote__set_output_allocator(nullptr, nullptr);
  }
};

TEST_P(OutputAllocatorFailureTest, FailsCleanlyAndKeepsLentBuffers) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("alias"));
  auto In = makeDenseInput<int32_t>({6}, {1, 2, 3, 4, 5, 6});
  std::vector<int32_t> Lent(6, -1);
  // Output 0 goes into Lent; outputs 1 (12 bytes) and 2 (24 bytes) need
  // fresh buffers. Refused at once, output 1 fails with nothing to release;
  // granted one, output 2 fails and output 1's buffer goes back.
  for (size_t Grant : std::vector<size_t>{0, 1, 0, 1}) {
    SCOPED_TRACE("granted " + std::to_string(Grant));
    Granted = Grant;
    Given.clear();
    Released.clear();
    Outputs Out({{1, 4}, {1, 4}, {1, 4}});
    for (size_t K = 0; K < Out.size(); ++K)
      Out[K].poison();
    EXPECT_FALSE(launchRemote(Session.get(), remoteEntry("alias_input"), "alias.o", {&In->D}, Out,
                              {{Lent.data(), 24}, {nullptr, 0}, {nullptr, 0}}));
    std::string Refused = Grant == 0 ? "output 1: cannot allocate 12 bytes on the host"
                                     : "output 2: cannot allocate 24 bytes on the host";
    EXPECT_NE(FailureLog::last().find(Refused), std::string::npos) << FailureLog::last();
    EXPECT_EQ(Given.size(), Grant);
    EXPECT_EQ(Released, Given) << "each buffer obtained is released once, a lent one never";
    for (size_t K = 0; K < Out.size(); ++K)
      EXPECT_TRUE(Out[K].allZero()) << "output " << K;
  }
  // Everything lent: no allocation is needed, and the session still works.
  Granted = 0;
  Given.clear();
  std::vector<int32_t> Odd(3), Fresh(6);
  {
    Outputs Out({{1, 4}, {1, 4}, {1, 4}});
    for (void *P : {(void *)Lent.data(), (void *)Odd.data(), (void *)Fresh.data()})
      Out.keep(P);
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("alias_input"), "alias.o", {&In->D}, Out,
                             {{Lent.data(), 24}, {Odd.data(), 12}, {Fresh.data(), 24}}))
        << FailureLog::last();
  }
  EXPECT_EQ(Odd, (std::vector<int32_t>{2, 4, 6}));
  EXPECT_EQ(Fresh, (std::vector<int32_t>{2, 3, 4, 5, 6, 7}));
  // And with the allocator granting again, fresh buffers come from it.
  Granted = 2;
  Released.clear();
  Outputs Out({{1, 4}, {1, 4}, {1, 4}});
  Out.keep(Lent.data());
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("alias_input"), "alias.o", {&In->D}, Out,
                           {{Lent.data(), 24}, {nullptr, 0}, {nullptr, 0}}))
      << FailureLog::last();
  EXPECT_EQ(Given, (std::vector<void *>{Out[1].allocated(), Out[2].allocated()}));
  EXPECT_TRUE(Released.empty());
  EXPECT_EQ(as<int32_t>(Out[2].values()), (std::vector<int32_t>{2, 3, 4, 5, 6, 7}));
}

INSTANTIATE_TEST_SUITE_P(AllModes, OutputAllocatorFailureTest, ::testing::ValuesIn(AllModes),
                         modeTestName);

// Host buffers come from the allocator installed for new sessions.
size_t Allocations = 0;
void *countingAlloc(size_t Bytes) {
  ++Allocations;
  return std::malloc(Bytes);
}

class OutputAllocatorTest : public CapiTest {
protected:
  void TearDown() override {
    CapiTest::TearDown();
    __catalyst__remote__set_output_allocator(nullptr, nullptr);
  }
};

TEST_F(OutputAllocatorTest, OutputsComeFromTheInstalledAllocator) {
  __catalyst__remote__set_output_allocator(&countingAlloc, &std::free);
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  ASSERT_NO_FATAL_FAILURE(sendKernel("alias"));
  auto In = makeDenseInput<int32_t>({4}, {1, 2, 3, 4});
  Allocations = 0;
  Outputs Out({{1, 4}, {1, 4}, {1, 4}});
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("alias_input"), "alias.o", {&In->D}, Out));
  EXPECT_EQ(Allocations, 3u);
}

// Lent buffers are checked before anything is sent.
TEST_F(OutputAllocatorTest, OverlappingLentBuffersAreRefused) {
  ASSERT_NO_FATAL_FAILURE(startAndOpen());
  ASSERT_NO_FATAL_FAILURE(sendKernel("alias"));
  auto In = makeDenseInput<int32_t>({4}, {1, 2, 3, 4});
  std::vector<int32_t> Buf(16, -1);
  Outputs Out({{1, 4}, {1, 4}, {1, 4}});
  EXPECT_FALSE(launchRemote(Session.get(), remoteEntry("alias_input"), "alias.o", {&In->D}, Out,
                            {{Buf.data(), 16}, {nullptr, 0}, {Buf.data() + 3, 16}}));
  EXPECT_NE(FailureLog::last().find("outputs 0 and 2: the buffers to receive them into overlap"),
            std::string::npos)
      << FailureLog::last();
  EXPECT_EQ(Buf, std::vector<int32_t>(16, -1));
}

// Programs cannot pass options to open(): the cap on a launch's outputs
// comes from CATALYST_REMOTE_MAX_OUTPUT_MIB, and counts lent buffers too.
TEST_F(OutputAllocatorTest, TheOutputCapComesFromTheEnvironment) {
  {
    ScopedEnv Cap("CATALYST_REMOTE_MAX_OUTPUT_MIB", "1");
    ASSERT_NO_FATAL_FAILURE(startAndOpen());
  }
  ASSERT_NO_FATAL_FAILURE(sendKernel("hostile"));
  std::vector<char> Lent(4 << 20);
  Outputs Out({{1, 1}});
  EXPECT_FALSE(launchRemote(Session.get(), remoteEntry("big_output"), "hostile.o", {}, Out,
                            {{Lent.data(), Lent.size()}}));
  EXPECT_NE(FailureLog::last().find("CATALYST_REMOTE_MAX_OUTPUT_MIB"), std::string::npos)
      << FailureLog::last();
  for (const char *Bad : {"0", "lots", "-4"}) {
    ScopedEnv Cap("CATALYST_REMOTE_MAX_OUTPUT_MIB", Bad);
    EXPECT_EQ(__catalyst__remote__open(("127.0.0.1:" + std::to_string(1)).c_str()), 0);
    EXPECT_NE(FailureLog::last().find("CATALYST_REMOTE_MAX_OUTPUT_MIB='" + std::string(Bad) +
                                      "' is not a size in MiB"),
              std::string::npos)
        << FailureLog::last();
  }
}

} // namespace
