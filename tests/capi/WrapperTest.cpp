//===- WrapperTest.cpp - Calling into executor plugins --------------------===//
//
// call_wrapper reaches ORC wrapper functions in a plugin the executor loaded;
// results under and over the 8 bytes a wrapper buffer holds inline take
// different paths. Kernels resolve plugin symbols too, and Catalyst runtime
// hooks in a plugin run around each connection.
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Pace.h"
#include "Procfs.h"

#include <filesystem>
#include <optional>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote::test;

namespace {

using Clock = std::chrono::steady_clock;

class WrapperTest : public CapiTest {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ExecutorOptions Options;
    Options.Plugins = {TEST_PLUGIN_PATH};
    ASSERT_NO_FATAL_FAILURE(startAndOpen(Options));
  }

  // Calls Symbol with Args; returns the result, or nothing on failure.
  std::optional<std::string> call(const std::string &Symbol, const std::string &Args) {
    void *Out = nullptr;
    size_t Size = 12345;
    int32_t Rc = __catalyst__remote__call_wrapper(Session.get(), Symbol.c_str(),
                                                  Args.empty() ? nullptr : Args.data(), Args.size(),
                                                  &Out, &Size);
    if (Rc != 0)
      return std::nullopt;
    // An empty result is no buffer, as in Catalyst's runtime.
    EXPECT_EQ(Out == nullptr, Size == 0) << Size << " bytes at " << Out;
    std::string Result(static_cast<char *>(Out), Size);
    __catalyst__remote__free_result(Out);
    return Result;
  }
};

std::string reversed(std::string S) {
  return std::string(S.rbegin(), S.rend());
}

TEST_F(WrapperTest, ResultsThatFitInline) {
  EXPECT_EQ(call("test_plugin_three_bytes", ""), std::optional<std::string>("xyz"));
  EXPECT_EQ(call("test_plugin_echo_reverse", "abcde"), std::optional<std::string>("edcba"));
  // Exactly the inline capacity, and one byte past it.
  EXPECT_EQ(call("test_plugin_echo_reverse", "12345678"), std::optional<std::string>("87654321"));
  EXPECT_EQ(call("test_plugin_echo_reverse", "123456789"), std::optional<std::string>("987654321"));
  EXPECT_EQ(call("test_plugin_echo_reverse", ""), std::optional<std::string>(""));
}

// As Catalyst's runtime: a caller that passes no out_buf discards the
// result, and an empty result is NULL with size 0.
TEST_F(WrapperTest, NoOutputBufferDiscardsTheResult) {
  size_t Size = 12345;
  EXPECT_EQ(__catalyst__remote__call_wrapper(Session.get(), "test_plugin_three_bytes", nullptr, 0,
                                             nullptr, &Size),
            0)
      << FailureLog::last();
  EXPECT_EQ(Size, 0u);
  EXPECT_EQ(__catalyst__remote__call_wrapper(Session.get(), "test_plugin_hundred_bytes", "x", 1,
                                             nullptr, nullptr),
            0)
      << FailureLog::last();
  void *Out = reinterpret_cast<void *>(0x1);
  Size = 12345;
  EXPECT_EQ(__catalyst__remote__call_wrapper(Session.get(), "test_plugin_echo_reverse", nullptr, 0,
                                             &Out, &Size),
            0)
      << FailureLog::last();
  EXPECT_EQ(Out, nullptr);
  EXPECT_EQ(Size, 0u);
  EXPECT_EQ(FailureLog::count(), 0u) << FailureLog::last();
}

TEST_F(WrapperTest, ResultsInAHeapBuffer) {
  auto Hundred = call("test_plugin_hundred_bytes", "ignored");
  ASSERT_TRUE(Hundred.has_value()) << FailureLog::last();
  ASSERT_EQ(Hundred->size(), 100u);
  for (int I = 0; I < 100; ++I)
    EXPECT_EQ((*Hundred)[I], char(7 * I + 1)) << "byte " << I;

  std::string Big(70000, '\0');
  for (size_t I = 0; I < Big.size(); ++I)
    Big[I] = char(I * 31 + I / 256);
  EXPECT_EQ(call("test_plugin_echo_reverse", Big), std::optional<std::string>(reversed(Big)));
}

TEST_F(WrapperTest, OutOfBandErrorIsReported) {
  EXPECT_EQ(call("test_plugin_refuse", "x"), std::nullopt);
  EXPECT_NE(FailureLog::last().find("test plugin refused the call"), std::string::npos)
      << FailureLog::last();
  EXPECT_EQ(call("test_plugin_three_bytes", ""), std::optional<std::string>("xyz"));
}

TEST_F(WrapperTest, MissingWrapperNamesTheSymbol) {
  EXPECT_EQ(call("test_plugin_no_such_wrapper", ""), std::nullopt);
  EXPECT_NE(FailureLog::last().find("test_plugin_no_such_wrapper"), std::string::npos)
      << FailureLog::last();
}

TEST_F(WrapperTest, KernelsLinkAgainstThePlugin) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("tick"));
  Outputs None({});
  for (int I = 0; I < 3; ++I)
    ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("tick"), "tick.o", {}, None))
        << FailureLog::last();
  uint64_t Ticks = 3;
  EXPECT_EQ(call("test_plugin_ticks", ""),
            std::optional<std::string>(std::string(reinterpret_cast<char *>(&Ticks), 8)));
}

TEST_F(WrapperTest, AsyncLaunchesAllRunBeforeAwaitReturns) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("tick"));
  std::vector<int64_t> Tokens;
  for (int I = 0; I < 8; ++I) {
    Tokens.push_back(
        __catalyst__remote__launch_async(Session.get(), remoteEntry("tick").c_str(), "tick.o"));
    ASSERT_GT(Tokens.back(), 0) << FailureLog::last();
  }
  size_t Before = FailureLog::count();
  for (int64_t T : Tokens)
    __catalyst__remote__await(T);
  EXPECT_EQ(FailureLog::count(), Before) << FailureLog::last();
  uint64_t Ticks = 8;
  EXPECT_EQ(call("test_plugin_ticks", ""),
            std::optional<std::string>(std::string(reinterpret_cast<char *>(&Ticks), 8)));
  // A token is good for one await: the second returns at once, as in
  // Catalyst's runtime, and runs nothing again.
  __catalyst__remote__await(Tokens[0]);
  EXPECT_EQ(FailureLog::count(), Before);
  EXPECT_EQ(call("test_plugin_ticks", ""),
            std::optional<std::string>(std::string(reinterpret_cast<char *>(&Ticks), 8)));
}

TEST_F(WrapperTest, AsyncLaunchOfAMissingEntryFailsAtAwait) {
  int64_t T = __catalyst__remote__launch_async(Session.get(), "_catalyst_pyface_absent", "");
  ASSERT_GT(T, 0);
  size_t Before = FailureLog::count();
  __catalyst__remote__await(T);
  EXPECT_EQ(FailureLog::count(), Before + 1);
  EXPECT_NE(FailureLog::last().find("_catalyst_pyface_absent"), std::string::npos)
      << FailureLog::last();
}

// The runtime hooks of a plugin: initialize before a connection is served,
// finalize after, both in the connection's own process.
class RuntimeHookTest : public CapiTest {};

TEST_F(RuntimeHookTest, InitializeAndFinalizeRunAroundEachConnection) {
  std::string Log = (std::filesystem::temp_directory_path() /
                     ("catalyst-remote-rt-" + std::to_string(::getpid()) + ".log"))
                        .string();
  std::filesystem::remove(Log);
  ExecutorOptions Options;
  Options.Plugins = {TEST_RT_PLUGIN_PATH};
  Options.Env = {"CATALYST_TEST_RT_LOG=" + Log};
  ASSERT_NO_FATAL_FAILURE(startAndOpen(Options));
  std::vector<pid_t> Pids;
  ASSERT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(5)));
  std::string Pid = std::to_string(Pids[0]);

  void *Out = nullptr;
  size_t Size = 0;
  ASSERT_EQ(__catalyst__remote__call_wrapper(Session.get(), "rt_plugin_initialized", nullptr, 0,
                                             &Out, &Size),
            0)
      << FailureLog::last();
  ASSERT_EQ(Size, 1u);
  EXPECT_EQ(*static_cast<char *>(Out), 1) << "initialize did not run in the connection process";
  __catalyst__remote__free_result(Out);
  EXPECT_EQ(readFile(Log), "initialize " + Pid + "\n");

  Session.reset();
  std::string Expected = "initialize " + Pid + "\nfinalize " + Pid + "\n";
  auto Deadline = Clock::now() + paced(std::chrono::seconds(5));
  while (readFile(Log) != Expected && Clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(readFile(Log), Expected);
  std::filesystem::remove(Log);
}

} // namespace
