//===- TokenSourceTest.cpp - The executor takes its secret as hosts do ----===//
//
// An executor started by a cluster's launcher gets what the job's
// environment holds: CATALYST_REMOTE_TOKEN_FILE (a file) or
// CATALYST_REMOTE_TOKEN (the secret itself), read as a host reads them;
// --token-file wins over both. Each source admits a host that knows the
// secret and refuses one that does not; the log names the source, never
// the secret.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Procfs.h"
#include "Text.h"
#include "TokenFile.h"

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

// Starts an executor with Env, its log in Token's folder.
::testing::AssertionResult startWith(ExecutorProcess &Exec, const TokenFile &Token,
                                     std::vector<std::string> Env,
                                     std::vector<std::string> Args = {}) {
  ExecutorOptions O;
  O.Env = std::move(Env);
  O.Args = std::move(Args);
  O.LogPath = Token.dir() + "/executor.log";
  return Exec.start(O);
}

std::string openError(const ExecutorProcess &Exec, const std::string &Secret) {
  SessionOptions O;
  if (!Secret.empty())
    O.Secret = SecretBytes::copyOf(Secret);
  auto S = Session::open(Exec.address(), forThisRun(O));
  return S ? "" : llvm::toString(S.takeError());
}

// A host with Right is served, one with another secret or none is refused.
void expectGuardedBy(const ExecutorProcess &Exec, const std::string &Right) {
  EXPECT_EQ(openError(Exec, Right), "");
  TokenFile Other;
  std::string Wrong = openError(Exec, Other.secret());
  EXPECT_TRUE(mentions(Wrong, "authentication failed")) << Wrong;
  std::string None = openError(Exec, "");
  EXPECT_TRUE(mentions(None, "requires a secret")) << None;
}

TEST(TokenSourceTest, TheTokenFileVariableGuardsTheExecutor) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(startWith(Exec, Token, {"CATALYST_REMOTE_TOKEN_FILE=" + Token.path()}));
  expectGuardedBy(Exec, Token.secret());
  std::string Log = readFile(Token.dir() + "/executor.log");
  EXPECT_TRUE(mentions(Log, "secret from CATALYST_REMOTE_TOKEN_FILE (" + Token.path() + ")"))
      << Log;
}

TEST(TokenSourceTest, TheSecretVariableGuardsTheExecutorAndIsNotLogged) {
  TokenFile Token;
  ExecutorProcess Exec;
  ASSERT_TRUE(startWith(Exec, Token, {"CATALYST_REMOTE_TOKEN=" + Token.secret()}));
  expectGuardedBy(Exec, Token.secret());
  std::string Log = readFile(Token.dir() + "/executor.log");
  EXPECT_TRUE(mentions(Log, "secret from CATALYST_REMOTE_TOKEN (taken out of the environment)"))
      << Log;
  EXPECT_FALSE(mentions(Log, Token.secret())) << Log;
}

// The file named on the command line, then the file named in the
// environment, then the secret in the environment.
TEST(TokenSourceTest, TheOptionWinsThenTheFileVariable) {
  TokenFile ByOption, ByFileVariable, ByVariable;
  std::vector<std::string> Env = {"CATALYST_REMOTE_TOKEN_FILE=" + ByFileVariable.path(),
                                  "CATALYST_REMOTE_TOKEN=" + ByVariable.secret()};
  ExecutorProcess Optioned;
  ASSERT_TRUE(startWith(Optioned, ByOption, Env, {"--token-file", ByOption.path()}));
  EXPECT_EQ(openError(Optioned, ByOption.secret()), "");
  EXPECT_NE(openError(Optioned, ByFileVariable.secret()), "");
  EXPECT_NE(openError(Optioned, ByVariable.secret()), "");
  ExecutorProcess Variables;
  ASSERT_TRUE(startWith(Variables, ByFileVariable, Env));
  EXPECT_EQ(openError(Variables, ByFileVariable.secret()), "");
  EXPECT_NE(openError(Variables, ByVariable.secret()), "");
}

CommandResult runExecutorWith(const std::vector<std::string> &Env) {
  // Only Env's secret variables: none from the shell that runs the tests.
  std::vector<std::string> Argv = {"/usr/bin/env", "-u", "CATALYST_REMOTE_TOKEN_FILE", "-u",
                                   "CATALYST_REMOTE_TOKEN"};
  Argv.insert(Argv.end(), Env.begin(), Env.end());
  Argv.insert(Argv.end(), {executorPath(), "--bind", "127.0.0.1:0"});
  return runCommand(Argv);
}

// As a host does, the executor refuses what the variables hold when it
// would refuse it from --token-file, naming the variable.
TEST(TokenSourceTest, UnusableVariablesStopTheExecutorNamingThem) {
  TokenFile Token;
  struct Case {
    std::string Env, Says;
  } Cases[] = {
      {"CATALYST_REMOTE_TOKEN=", "CATALYST_REMOTE_TOKEN is set but empty"},
      {"CATALYST_REMOTE_TOKEN_FILE=", "CATALYST_REMOTE_TOKEN_FILE is set but empty"},
      {"CATALYST_REMOTE_TOKEN=short", "the secret in CATALYST_REMOTE_TOKEN has 5 bytes"},
      {"CATALYST_REMOTE_TOKEN_FILE=" + Token.dir() + "/missing", "CATALYST_REMOTE_TOKEN_FILE ("},
  };
  for (const Case &C : Cases) {
    CommandResult R = runExecutorWith({C.Env});
    EXPECT_EQ(R.ExitStatus, 2) << C.Env << ": " << R.Output;
    EXPECT_TRUE(mentions(R.Output, C.Says)) << C.Env << ": " << R.Output;
    EXPECT_FALSE(mentions(R.Output, "listening on")) << R.Output;
  }
}

} // namespace
