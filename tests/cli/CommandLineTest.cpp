//===- CommandLineTest.cpp - Help, usage errors, exit statuses ------------===//
//
// 0 on success, 2 for a command line that cannot be used, 1 for anything
// else that failed; a failure is always one line.
//
//===----------------------------------------------------------------------===//

#include "CliHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Sockets.h"

#include <gtest/gtest.h>

using namespace catalyst::remote::test;

namespace {

bool mentions(const CommandResult &R, const std::string &What) {
  return R.Output.find(What) != std::string::npos;
}

TEST(CommandLineTest, HelpForTheToolAndEachCommand) {
  CommandResult R = runCli({"--help"});
  EXPECT_EQ(R.ExitStatus, 0);
  EXPECT_TRUE(mentions(R, "usage: catalyst-remote COMMAND")) << R.Output;
  EXPECT_TRUE(mentions(R, "Exit status: 0 on success, 1 when something failed, 2")) << R.Output;
  R = runCli({"--version"});
  EXPECT_EQ(R.ExitStatus, 0);
  EXPECT_EQ(R.Output, "catalyst-remote " CATALYST_REMOTE_VERSION "\n");
  R = runCli({"run", "--help"});
  EXPECT_EQ(R.ExitStatus, 0);
  for (const char *Word : {"usage: catalyst-remote run ADDR OBJECT ENTRY", "--in FILE.npy",
                           "--out DTYPE:RANK", "--out-dir DIR", "--strategy S", "--repeat N",
                           "--json", "Fortran order", "CATALYST_REMOTE_TOKEN_FILE"})
    EXPECT_TRUE(mentions(R, Word)) << Word << " in\n" << R.Output;
  // Help wins over whatever else is on the line.
  R = runCli({"ping", "nowhere:1", "--count", "zero", "-h"});
  EXPECT_EQ(R.ExitStatus, 0);
  EXPECT_TRUE(mentions(R, "usage: catalyst-remote ping ADDR [--count N] [--json]")) << R.Output;
}

TEST(CommandLineTest, UnusableCommandLinesExitWithTwo) {
  const std::pair<std::vector<std::string>, std::vector<std::string>> Cases[] = {
      {{}, {"no command given"}},
      {{"frobnicate"}, {"unknown command 'frobnicate'", "catalyst-remote --help"}},
      {{"run", "127.0.0.1:1"}, {"expected ADDR OBJECT ENTRY (1 given)", "run --help"}},
      {{"run", "a:1", "k.o", "e", "--bogus"}, {"unknown option '--bogus'"}},
      {{"run", "a:1", "k.o", "e", "--out", "f128:1"}, {"unknown dtype 'f128'", "float64"}},
      {{"run", "a:1", "k.o", "e", "--out", "f64"}, {"expected DTYPE:RANK"}},
      {{"run", "a:1", "k.o", "e", "--out", "f64:65"}, {"the rank at most 64"}},
      {{"run", "a:1", "k.o", "e", "--repeat", "0"}, {"--repeat 0", "from 1"}},
      {{"run", "a:1", "k.o", "e", "--strategy=fast"}, {"unknown transfer strategy 'fast'"}},
      {{"run", "a:1", "k.o", "e", "--in"}, {"--in needs a value (FILE.npy)"}},
      {{"ping", "a:1", "--json=yes"}, {"--json takes no value"}},
      {{"ping", "a:1", "--count", "-3"}, {"--count -3"}},
      {{"ping"}, {"expected ADDR (0 given)", "ping --help"}},
  };
  for (const auto &[Args, Words] : Cases) {
    SCOPED_TRACE(Args.empty() ? "(nothing)" : Args.back());
    EXPECT_TRUE(failedWithOneLine(runCli(Args), 2, Words));
  }
}

TEST(CommandLineTest, FailuresExitWithOne) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  // Bound, not listening: connections are refused.
  LoopbackSocket Refusing(false);
  std::string Closed = Refusing.address();
  EXPECT_TRUE(failedWithOneLine(runCli({"ping", Closed}), 1, {Closed}));
  EXPECT_TRUE(failedWithOneLine(
      runCli({"run", Closed, kernelObject("concat"), "concat_0", "--out", "u8:1"}), 1, {Closed}));
  EXPECT_TRUE(failedWithOneLine(
      runCli({"run", Exec.address(), "/nonexistent/k.o", "concat_0", "--out", "u8:1"}), 1,
      {"/nonexistent/k.o"}));
  EXPECT_TRUE(failedWithOneLine(
      runCli({"run", Exec.address(), kernelObject("concat"), "no_such_entry", "--out", "u8:1"}), 1,
      {"_catalyst_pyface_no_such_entry"}));
  TempDir Dir;
  writeFile(Dir.path("file"), "not a folder");
  EXPECT_TRUE(failedWithOneLine(runCli({"run", Exec.address(), kernelObject("concat"), "concat_0",
                                        "--out", "u8:1", "--out-dir", Dir.path("file/sub")}),
                                1, {Dir.path("file/sub")}));
  // And success is 0, with a launch that needs no input at all.
  CommandResult R = runCli({"run", Exec.address(), kernelObject("concat"), "concat_0", "--out",
                            "u8:1", "--out-dir", Dir.dir()});
  EXPECT_EQ(R.ExitStatus, 0) << R.Output;
}

} // namespace
