//===- ExecutorStartTest.cpp - What the executor refuses to start with ----===//
//
// The executor runs whatever a connected host sends, so it refuses to start
// where that would be open to anyone: beyond loopback without a secret
// (unless told to, with a warning), with a token file others may read, with
// a secret short enough to guess. `--new-token` writes a secret fit to use.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "ExecutorProcess.h"
#include "Procfs.h"
#include "Text.h"
#include "TokenFile.h"
#include "wire/Protocol.h"

#include <cstring>
#include <fstream>
#include <sys/stat.h>

using namespace catalyst::remote::test;

namespace {

CommandResult runExecutor(std::vector<std::string> Args) {
  Args.insert(Args.begin(), executorPath());
  return runCommand(Args);
}

void writeFile(const std::string &Path, const std::string &Text, mode_t Mode) {
  std::ofstream(Path) << Text;
  ASSERT_EQ(::chmod(Path.c_str(), Mode), 0);
}

// The release and the wire protocol it speaks, as a packager or a bug
// report wants them, without starting anything.
TEST(ExecutorStartTest, VersionNamesTheReleaseAndTheProtocol) {
  CommandResult R = runExecutor({"--version"});
  EXPECT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_EQ(R.Output, "catalyst-remote-executor " CATALYST_REMOTE_VERSION ", protocol " +
                          std::to_string(catalyst::remote::wire::ProtocolVersion) + "\n");
}

TEST(ExecutorStartTest, NewTokenWritesAPrivateSecretOnceOnly) {
  TokenFile Token; // made with --new-token
  struct stat St;
  ASSERT_EQ(::stat(Token.path().c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 07777, 0600u);
  EXPECT_EQ(Token.secret().find_first_not_of("0123456789abcdef"), std::string::npos);
  TokenFile Another;
  EXPECT_NE(Token.secret(), Another.secret());

  CommandResult Again = runExecutor({"--new-token", Token.path()});
  EXPECT_NE(Again.ExitStatus, 0);
  EXPECT_TRUE(mentions(Again.Output, "File exists")) << Again.Output;
  EXPECT_EQ(readFile(Token.path()), Token.secret() + "\n") << "the old secret stays";
}

TEST(ExecutorStartTest, ATokenFileOthersMayReadIsRefused) {
  TokenFile Token;
  ASSERT_EQ(::chmod(Token.path().c_str(), 0640), 0);
  CommandResult R = runExecutor({"--bind", "127.0.0.1:0", "--token-file", Token.path()});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "chmod 600")) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "mode 0640")) << R.Output;
  EXPECT_FALSE(mentions(R.Output, "listening on")) << R.Output;
}

// What points at, or stands in place of, a good token file is refused.
TEST(ExecutorStartTest, ASymlinkToATokenFileIsRefused) {
  TokenFile Token;
  std::string Link = Token.dir() + "/link";
  ASSERT_EQ(::symlink(Token.path().c_str(), Link.c_str()), 0) << std::strerror(errno);
  CommandResult R = runExecutor({"--bind", "127.0.0.1:0", "--token-file", Link});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "symbolic link")) << R.Output;
}

TEST(ExecutorStartTest, ATokenFileOfAnotherUserIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "giving a file to another user needs root";
  TokenFile Token;
  ASSERT_EQ(::chown(Token.path().c_str(), 65534, 65534), 0) << std::strerror(errno);
  CommandResult R = runExecutor({"--bind", "127.0.0.1:0", "--token-file", Token.path()});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "owned by uid 65534")) << R.Output;
}

TEST(ExecutorStartTest, ATokenFileInADirectoryOthersMayWriteIsRefused) {
  TokenFile Token;
  ASSERT_EQ(::chmod(Token.dir().c_str(), 01777), 0);
  CommandResult R = runExecutor({"--bind", "127.0.0.1:0", "--token-file", Token.path()});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "writable by group or others (mode 01777)")) << R.Output;
}

TEST(ExecutorStartTest, AWeakSecretIsWarnedAbout) {
  TokenFile Token;
  std::string Weak = Token.dir() + "/weak", Log = Token.dir() + "/executor.log";
  writeFile(Weak, "sixteen-letters!\n", 0600);
  ExecutorOptions Options;
  Options.Args = {"--token-file", Weak};
  Options.LogPath = Log;
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(Options));
  EXPECT_TRUE(mentions(readFile(Log), "warning: the secret in " + Weak + " has at most 96 bits"))
      << readFile(Log);
  // A secret from --new-token is not.
  ExecutorProcess Strong;
  Options.Args = {"--token-file", Token.path()};
  ASSERT_TRUE(Strong.start(Options));
  std::string Said = readFile(Log);
  EXPECT_EQ(Said.find("warning: the secret"), Said.rfind("warning: the secret")) << Said;
}

TEST(ExecutorStartTest, ASecretTooShortToBeSafeIsRefused) {
  TokenFile Token;
  std::string Short = Token.dir() + "/short";
  writeFile(Short, "abc\n", 0600);
  CommandResult R = runExecutor({"--bind", "127.0.0.1:0", "--token-file", Short});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "at least 16")) << R.Output;
}

TEST(ExecutorStartTest, ListeningBeyondLoopbackNeedsATokenOrAnExplicitChoice) {
  CommandResult R = runExecutor({"--bind", "0.0.0.0:0"});
  EXPECT_EQ(R.ExitStatus, 2);
  EXPECT_TRUE(mentions(R.Output, "refusing to listen on 0.0.0.0:")) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "--token-file")) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "--new-token")) << R.Output;
  EXPECT_TRUE(mentions(R.Output, "--allow-unauthenticated")) << R.Output;
  EXPECT_FALSE(mentions(R.Output, "listening on")) << R.Output;

  TokenFile Token;
  std::string Log = Token.dir() + "/executor.log";
  ExecutorOptions Open;
  Open.Args = {"--bind", "0.0.0.0:0", "--allow-unauthenticated"};
  Open.LogPath = Log;
  ExecutorProcess Warned;
  ASSERT_TRUE(Warned.start(Open));
  EXPECT_TRUE(mentions(readFile(Log), "warning")) << readFile(Log);

  ExecutorProcess Guarded;
  EXPECT_TRUE(
      Guarded.start({false, {}, {}, {"--bind", "0.0.0.0:0", "--token-file", Token.path()}}));
}

TEST(ExecutorStartTest, OptionValuesOutOfRangeAreRefused) {
  for (auto Args : std::vector<std::vector<std::string>>{{"--max-message", "99999999999999999"},
                                                         {"--max-slab-mib=0"},
                                                         {"--max-resident-mib=0"},
                                                         {"--max-resident-mib", "lots"},
                                                         {"--handshake-timeout", "-1"},
                                                         {"--max-connections=x"},
                                                         {"--max-startups=5:200:10"},
                                                         {"--max-startups", "20:30:10"},
                                                         {"--max-startups-per-source=0"},
                                                         {"--token-file"}}) {
    Args.insert(Args.begin(), {"--bind", "127.0.0.1:0"});
    CommandResult R = runExecutor(Args);
    EXPECT_EQ(R.ExitStatus, 2) << Args[2];
    EXPECT_TRUE(mentions(R.Output, Args[2].substr(0, Args[2].find('=')))) << R.Output;
  }
}

// A secret on the command line is one any local user can read (ps,
// /proc/PID/cmdline): refused, pointing at --token-file, and not repeated.
TEST(ExecutorStartTest, ASecretOnTheCommandLineIsRefused) {
  for (auto Args : std::vector<std::vector<std::string>>{{"--token", "s3cr3t-on-the-command-line"},
                                                         {"--token=s3cr3t-on-the-command-line"}}) {
    Args.insert(Args.begin(), {"--bind", "127.0.0.1:0"});
    CommandResult R = runExecutor(Args);
    EXPECT_EQ(R.ExitStatus, 2) << Args[2];
    EXPECT_TRUE(mentions(R.Output, "--token-file PATH")) << R.Output;
    EXPECT_FALSE(mentions(R.Output, "s3cr3t")) << R.Output;
  }
}

} // namespace
