//===- SecretHidingTest.cpp - Kernels do not find the executor's secret ---===//
//
// An executor started with the secret in its environment
// (CATALYST_REMOTE_TOKEN, exported for a host in the same shell, or for the
// whole job by a cluster's launcher) removes it, value wiped, before it
// forks a connection process: whether it takes its secret from there or
// from --token-file. A kernel looks where any kernel could: getenv, its
// process's /proc environ and cmdline, and its listener's.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "TokenFile.h"

#include <cstdlib>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

const char *const Places[] = {"getenv", "environ", "cmdline", "listener's environ",
                              "listener's cmdline"};

// What secret_probe reports, in the order of Places, for a kernel run in
// a session opened with O on Exec.
std::vector<int64_t> probe(const ExecutorProcess &Exec, const SessionOptions &O,
                           const std::string &Secret) {
  auto S = openSession(Exec.address(), O);
  if (!S)
    return {};
  EXPECT_EQ(messageOf(S->sendBinary(kernelObject("secret_probe"), BinaryFormat::Object)), "");
  auto In = makeDenseInput({int64_t(Secret.size())}, 1, Secret.data());
  Desc Out(1, 8);
  Out.poison();
  EXPECT_EQ(messageOf(S->launch({remoteEntry("secret_probe"),
                                 "secret_probe.o",
                                 {{In->D.data(), 1, 1}},
                                 {{Out.data(), 1, 8}}})),
            "");
  std::vector<int64_t> Found = as<int64_t>(Out.values());
  std::free(Out.allocated());
  return Found;
}

void expectHidden(const std::vector<int64_t> &Found) {
  ASSERT_EQ(Found.size(), std::size(Places));
  for (size_t I = 0; I < Found.size(); ++I)
    EXPECT_EQ(Found[I], 0) << "a kernel " << (Found[I] < 0 ? "could not look in " : "found it in ")
                           << Places[I];
}

// An executor started with EO and Token's secret in its environment
// hides it from kernels.
void expectHiddenIn(ExecutorOptions EO, const TokenFile &Token) {
  EO.Env.push_back("CATALYST_REMOTE_TOKEN=" + Token.secret());
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(EO));
  SessionOptions O;
  O.Secret = SecretBytes::copyOf(Token.secret());
  expectHidden(probe(Exec, O, Token.secret()));
}

TEST(SecretHidingTest, AKernelDoesNotFindTheSecretTheExecutorWasStartedWith) {
  TokenFile Token;
  ExecutorOptions EO;
  EO.Args = {"--token-file", Token.path()};
  expectHiddenIn(EO, Token);
}

TEST(SecretHidingTest, AKernelDoesNotFindTheSecretTheExecutorTookFromItsEnvironment) {
  TokenFile Token;
  expectHiddenIn({}, Token);
}

// The probe sees what is there: a marker in the environment of an
// executor that asks no secret, and one of its arguments.
TEST(SecretHidingTest, TheProbeFindsWhatIsThere) {
  std::string Marker = "probe-marker-0123456789abcdef";
  ExecutorOptions EO;
  EO.Env = {"CATALYST_REMOTE_PROBE_MARKER=" + Marker};
  EO.Args = {"--handshake-timeout", "7"};
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start(EO));
  std::vector<int64_t> InEnv = probe(Exec, {}, Marker);
  ASSERT_EQ(InEnv.size(), std::size(Places));
  EXPECT_EQ(InEnv, (std::vector<int64_t>{0, 1, 0, 1, 0}));
  std::vector<int64_t> InArgs = probe(Exec, {}, "--handshake-timeout");
  EXPECT_EQ(InArgs, (std::vector<int64_t>{0, 0, 1, 0, 1}));
}

} // namespace
