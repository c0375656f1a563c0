//===- ExceptionTest.cpp - Failures a compiled program's caller catches ---===//
//
// Catalyst's Python wrapper calls a compiled program inside try/catch and
// turns a std::exception into a RuntimeError, so that a lost executor costs
// a notebook one cell, not its interpreter. The program here is compiled
// from MLIR (compiled_program.mlir) and calls __catalyst__executor__launch as
// Catalyst's lowering does; these tests call it as the wrapper does, in every
// mode, and check that the process goes on and can launch again.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Deaths.h"
#include "Pace.h"
#include "Sockets.h"
#include "Text.h"

#include <csignal>
#include <filesystem>
#include <optional>
#include <thread>
#include <unistd.h>

extern "C" {
// compiled_program.mlir: open, send_binary, launch, close.
void catalyst_test_program(const char *Addr, const char *Object, const char *Entry,
                           int64_t NumInputs, void *const *Inputs, const size_t *InputRanks,
                           const size_t *InputElemSizes, int64_t NumOutputs, void *const *Outputs,
                           const size_t *OutputRanks, const size_t *OutputElemSizes);

void __catalyst__executor__set_failure_handler(void (*)(const char *));
int64_t __catalyst__executor__open(const char *);
int64_t __catalyst__executor__send_binary(int64_t, const char *, uint32_t);
int32_t __catalyst__executor__call_wrapper(int64_t, const char *, const char *, size_t, void **,
                                           size_t *);
void __catalyst__executor__await(int64_t);
}

using namespace catalyst::remote::test;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// What the wrapper would raise: the exception's message, or nothing when the
// program returned.
std::optional<std::string> runProgram(const std::string &Addr, const std::string &Kernel,
                                      const std::string &Entry, const InputList &Inputs,
                                      Outputs &Out) {
  InputArrays In(Inputs);
  auto OutDescs = Out.descs();
  auto OutRanks = Out.ranks();
  auto OutSizes = Out.elemSizes();
  try {
    catalyst_test_program(Addr.c_str(), kernelObject(Kernel).c_str(), remoteEntry(Entry).c_str(),
                          int64_t(In.Descs.size()), In.Descs.data(), In.Ranks.data(),
                          In.Sizes.data(), int64_t(OutDescs.size()), OutDescs.data(),
                          OutRanks.data(), OutSizes.data());
    return std::nullopt;
  } catch (const std::exception &E) {
    return std::string(E.what());
  }
}

// A C ABI test whose sessions, opened by the compiled program, use the
// mode's strategy and transport.
class ExceptionTest : public CapiTest, public ::testing::WithParamInterface<Mode> {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startAndOpen(GetParam()));
  }

  // The program's failure, checked to be the same as last_error and, once
  // the program reached the launch, to leave the output descriptor zeroed.
  std::string expectThrows(const std::string &Addr, const std::string &Kernel,
                           const std::string &Entry, const InputList &Inputs,
                           bool ReachesLaunch = true) {
    Outputs Out({{1, 8}});
    if (ReachesLaunch) // else left as it is, zeroed
      Out[0].poison();
    auto Thrown = runProgram(Addr, Kernel, Entry, Inputs, Out);
    EXPECT_TRUE(Thrown.has_value()) << "the program returned";
    std::string Msg = Thrown.value_or("");
    EXPECT_EQ(Msg, __catalyst__remote__last_error());
    EXPECT_TRUE(FailureLog::all().empty()) << "the __catalyst__remote__ handler saw it";
    if (ReachesLaunch) {
      EXPECT_TRUE(Out[0].allZero()) << "a failed launch must zero its output descriptors";
    }
    return Msg;
  }

  // The process goes on: the program launches on a healthy executor and
  // gets the same values as the kernel run here.
  void expectHealthyLaunch(const std::string &Addr) {
    std::mt19937_64 Rng(3);
    auto In = makeInput(Layout::Dense, {5}, 8, Rng);
    Outputs Remote({{1, 8}}), Local({{1, 8}});
    auto Thrown = runProgram(Addr, "map", "map_r1_e8", {&In->D}, Remote);
    ASSERT_FALSE(Thrown.has_value()) << *Thrown;
    runLocal(hostEntry("map", "map_r1_e8"), {&In->D}, Local);
    EXPECT_TRUE(sameOutputs(Remote, Local));
  }

  // A new executor, as in the mode, for the launch after a failure.
  void expectHealthyExecutor() {
    ExecutorProcess Healthy;
    ExecutorOptions Options;
    Options.UpstreamOnly = GetParam() == Mode::UpstreamOnly;
    ASSERT_TRUE(Healthy.start(Options));
    expectHealthyLaunch(Healthy.address());
    EXPECT_TRUE(Healthy.stop());
  }

  void TearDown() override {
    CapiTest::TearDown();
    EXPECT_TRUE(FailureLog::all().empty()) << FailureLog::all().front();
  }

private:
  // The compiled program's sessions in the mode, as startAndOpen's.
  ScopedEnv Strategy{"CATALYST_REMOTE_STRATEGY",
                     GetParam() == Mode::UpstreamOnly ? nullptr : expectedStrategy(GetParam())};
  ScopedEnv Transport{"CATALYST_REMOTE_TRANSPORT", expectedTransport(GetParam())};
};

TEST_P(ExceptionTest, RefusedAddress) {
  LoopbackSocket Refusing(/*Listen=*/false);
  std::mt19937_64 Rng(1);
  auto In = makeInput(Layout::Dense, {4}, 8, Rng);
  std::string Msg =
      expectThrows(Refusing.address(), "map", "map_r1_e8", {&In->D}, /*ReachesLaunch=*/false);
  EXPECT_TRUE(mentions(Msg, "open")) << Msg;
  EXPECT_TRUE(mentions(Msg, Refusing.address())) << Msg;
  EXPECT_TRUE(mentions(Msg, "refused")) << Msg;
  expectHealthyLaunch(Exec.address());
}

TEST_P(ExceptionTest, KernelThatCrashesItsConnection) {
  std::mt19937_64 Rng(2);
  auto In = makeInput(Layout::Dense, {4}, 8, Rng);
  std::string Msg = expectThrows(Exec.address(), "crash", "crash", {&In->D});
  EXPECT_TRUE(mentions(Msg, "launch of '" + remoteEntry("crash") + "'")) << Msg;
  EXPECT_TRUE(mentions(Msg, "signal 11 (Segmentation fault)")) << Msg;
  // The executor serves a new session on the same address.
  expectHealthyLaunch(Exec.address());
}

TEST_P(ExceptionTest, ExecutorKilledMidLaunch) {
  fs::path Flag = fs::temp_directory_path() /
                  ("catalyst-remote-killed-" + std::to_string(::getpid()) + modeName(GetParam()));
  fs::remove(Flag);
  auto Ms = makeDenseInput<int64_t>({1}, {10 * 60 * 1000});
  std::string FlagPath = Flag.string();
  std::vector<char> PathBytes(FlagPath.begin(), FlagPath.end());
  PathBytes.push_back('\0');
  auto Path = makeDenseInput({int64_t(PathBytes.size())}, 1, PathBytes.data());
  // Killed once the kernel runs, the listener and its connection process
  // both, as an OOM killer or a node failure would.
  std::thread Killer([&] {
    auto Deadline = Clock::now() + paced(std::chrono::seconds(30));
    while (!fs::exists(Flag) && Clock::now() < Deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(fs::exists(Flag)) << "the kernel never started";
    for (pid_t P : Exec.connectionPids())
      ::kill(P, SIGKILL);
    ::kill(Exec.pid(), SIGKILL);
  });
  auto Started = Clock::now();
  std::string Msg = expectThrows(Exec.address(), "sleepy", "sleepy_flag", {&Ms->D, &Path->D});
  Killer.join();
  fs::remove(Flag);
  EXPECT_LT(Clock::now() - Started, paced(std::chrono::seconds(60)))
      << "the launch outlived its executor";
  EXPECT_TRUE(mentions(Msg, "launch")) << Msg;
  EXPECT_TRUE(mentions(Msg, "signal 9") || mentions(Msg, "closed") || mentions(Msg, "lost")) << Msg;
  expectHealthyExecutor();
}

INSTANTIATE_TEST_SUITE_P(Modes, ExceptionTest, ::testing::ValuesIn(AllModes), modeTestName);

// The other prefix and installed handlers.
class ReportingTest : public CapiTest {
protected:
  static void record(const char *Message) { Recorded.push_back(Message); }
  static inline std::vector<std::string> Recorded;

  void TearDown() override {
    __catalyst__executor__set_failure_handler(nullptr);
    Recorded.clear();
    CapiTest::TearDown();
  }
};

TEST_F(ReportingTest, RemotePrefixCallsItsHandlerAndNeverThrows) {
  LoopbackSocket Refusing(/*Listen=*/false);
  int64_t H = -1;
  EXPECT_NO_THROW(H = __catalyst__remote__open(Refusing.address().c_str()));
  EXPECT_EQ(H, 0);
  ASSERT_EQ(FailureLog::count(), 1u);
  EXPECT_TRUE(mentions(FailureLog::last(), Refusing.address())) << FailureLog::last();
}

TEST_F(ReportingTest, AnInstalledHandlerStopsTheThrowUntilItIsRemoved) {
  LoopbackSocket Refusing(/*Listen=*/false);
  __catalyst__executor__set_failure_handler(&record);
  int64_t H = -1;
  EXPECT_NO_THROW(H = __catalyst__executor__open(Refusing.address().c_str()));
  EXPECT_EQ(H, 0);
  ASSERT_EQ(Recorded.size(), 1u);
  EXPECT_EQ(Recorded[0], __catalyst__remote__last_error());
  EXPECT_TRUE(FailureLog::all().empty()) << "the other prefix's handler was called";
  // NULL restores the default: throw.
  __catalyst__executor__set_failure_handler(nullptr);
  EXPECT_THROW(__catalyst__executor__open(Refusing.address().c_str()), std::runtime_error);
  EXPECT_EQ(Recorded.size(), 1u);
}

TEST_F(ReportingTest, UnknownSessionThrowsAndNamesIt) {
  try {
    __catalyst__executor__send_binary(987654, kernelObject("map").c_str(), 0);
    FAIL() << "no exception";
  } catch (const std::runtime_error &E) {
    EXPECT_TRUE(mentions(E.what(), "send_binary")) << E.what();
    EXPECT_TRUE(mentions(E.what(), "987654")) << E.what();
  }
}

} // namespace
