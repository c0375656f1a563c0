//===- PingTest.cpp - catalyst-remote ping --------------------------------===//

#include "CliHarness.h"
#include "ExecutorProcess.h"
#include "TokenFile.h"
#include "wire/Protocol.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

using namespace catalyst::remote::test;

namespace {

bool mentions(const CommandResult &R, const std::string &What) {
  return R.Output.find(What) != std::string::npos;
}

class PingTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Exec.start()); }
  ExecutorProcess Exec;
};

TEST_F(PingTest, SaysWhatTheExecutorOffers) {
  CommandResult R = runCli({"ping", Exec.address()});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_TRUE(mentions(R, "catalyst-remote-executor " CATALYST_REMOTE_VERSION ", protocol " +
                              std::to_string(catalyst::remote::wire::ProtocolVersion)))
      << R.Output;
  EXPECT_TRUE(mentions(R, "zerocopy, batched, naive (launches use zerocopy)")) << R.Output;
  EXPECT_TRUE(mentions(R, "heartbeats, wrapper errors")) << R.Output;
  EXPECT_TRUE(mentions(R, "none (no secret asked)")) << R.Output;
  EXPECT_TRUE(mentions(R, "over 10 (")) << R.Output;
}

TEST_F(PingTest, JsonWithRoundTripStatistics) {
  CommandResult R = runCli({"ping", Exec.address(), "--count", "7", "--json"});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  auto V = llvm::json::parse(R.Output);
  ASSERT_TRUE(static_cast<bool>(V)) << llvm::toString(V.takeError()) << R.Output;
  const llvm::json::Object &O = *V->getAsObject();
  EXPECT_EQ(O.getString("version"), CATALYST_REMOTE_VERSION);
  EXPECT_EQ(O.getInteger("protocol"), int64_t(catalyst::remote::wire::ProtocolVersion));
  EXPECT_EQ(O.getString("strategy"), "zerocopy");
  EXPECT_EQ(O.getBoolean("authenticated"), false);
  EXPECT_EQ(O.getArray("strategies")->size(), 3u);
  const llvm::json::Object &T = *O.getObject("round_trip_ns");
  EXPECT_EQ(T.getInteger("count"), 7);
  int64_t Min = *T.getInteger("min"), Median = *T.getInteger("median"), P99 = *T.getInteger("p99"),
          Max = *T.getInteger("max");
  EXPECT_GT(Min, 0);
  EXPECT_LE(Min, Median);
  EXPECT_LE(Median, P99);
  EXPECT_EQ(P99, Max) << "below 100 pings the 99th percentile is the slowest";
}

TEST_F(PingTest, UpstreamServicesOnly) {
  ExecutorProcess Upstream;
  ASSERT_TRUE(Upstream.start({/*UpstreamOnly=*/true, {}, {}}));
  CommandResult R = runCli({"ping", Upstream.address(), "--count", "3"});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_TRUE(mentions(R, "Catalyst's upstream services only")) << R.Output;
  EXPECT_TRUE(mentions(R, "strategies:     naive (launches use naive)")) << R.Output;
  EXPECT_TRUE(mentions(R, "extensions:     none")) << R.Output;
}

// The secret comes from the environment, as for every host; the strategy
// too.
TEST_F(PingTest, HonoursTheEnvironment) {
  TokenFile Token;
  ExecutorProcess Guarded;
  ExecutorOptions O;
  O.Args = {"--token-file", Token.path()};
  ASSERT_TRUE(Guarded.start(O));
  EXPECT_TRUE(failedWithOneLine(runCli({"ping", Guarded.address()}), 1, {Guarded.address()}));
  for (const std::string &Env :
       {"CATALYST_REMOTE_TOKEN_FILE=" + Token.path(), "CATALYST_REMOTE_TOKEN=" + Token.secret()}) {
    CommandResult R = runCli({"ping", Guarded.address()}, {Env});
    ASSERT_EQ(R.ExitStatus, 0) << R.Output;
    EXPECT_TRUE(mentions(R, "shared secret, proven by both ends")) << R.Output;
  }
  CommandResult R = runCli({"ping", Exec.address()}, {"CATALYST_REMOTE_STRATEGY=batched"});
  EXPECT_TRUE(mentions(R, "(launches use batched)")) << R.Output;
  EXPECT_TRUE(failedWithOneLine(runCli({"ping", Exec.address()}, {"CATALYST_REMOTE_STRATEGY=fast"}),
                                1, {"unknown transfer strategy 'fast'"}));
}

// With a token, TCP sessions are TLS; the local socket stays plain; a
// host that asks otherwise than the executor is refused, naming both.
TEST_F(PingTest, ShowsTheWireProtection) {
  TokenFile Token;
  ExecutorProcess Guarded;
  ExecutorOptions O;
  O.Bind = "0";
  O.Args = {"--token-file", Token.path()};
  ASSERT_TRUE(Guarded.start(O));
  std::string Secret = "CATALYST_REMOTE_TOKEN_FILE=" + Token.path();
  CommandResult R = runCli({"ping", Guarded.address(), "--count", "2"},
                           {Secret, "CATALYST_REMOTE_TRANSPORT=tcp"});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_TRUE(mentions(R, "wire:           TLSv1.3 TLS_AES_128_GCM_SHA256")) << R.Output;
  R = runCli({"ping", Guarded.address(), "--json"}, {Secret, "CATALYST_REMOTE_TRANSPORT=shm"});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  auto V = llvm::json::parse(R.Output);
  ASSERT_TRUE(static_cast<bool>(V)) << llvm::toString(V.takeError()) << R.Output;
  EXPECT_EQ(V->getAsObject()->getString("protection"), "plain");
  EXPECT_EQ(V->getAsObject()->getString("transport"), "local");
  EXPECT_TRUE(failedWithOneLine(
      runCli({"ping", Guarded.address()},
             {Secret, "CATALYST_REMOTE_TRANSPORT=tcp", "CATALYST_REMOTE_WIRE=plain"}),
      1, {"the executor's is tls", "CATALYST_REMOTE_WIRE=plain"}));
}

TEST_F(PingTest, ReachesAnExecutorAtASocketFile) {
  TempDir Dir;
  ExecutorOptions O;
  O.Bind = "unix:" + Dir.path("exec.sock");
  ExecutorProcess AtFile;
  ASSERT_TRUE(AtFile.start(O));
  CommandResult R = runCli({"ping", O.Bind, "--count", "3"});
  ASSERT_EQ(R.ExitStatus, 0) << R.Output;
  EXPECT_TRUE(mentions(R, "executor:       " + O.Bind + ", catalyst-remote-executor")) << R.Output;
  std::string Missing = "unix:" + Dir.path("none.sock");
  EXPECT_TRUE(failedWithOneLine(runCli({"ping", Missing}), 1,
                                {"cannot connect to " + Missing, "No such file or directory"}));
}

} // namespace
