//===- LinkCutTest.cpp - A link that goes silent mid-transfer -------------===//
//
// The executor runs in the exec namespace of a network lab (tools/netlab),
// this test in its host namespace, across a veth pair shaped to 1 Gbit/s.
// Mid-transfer the exec end of the veth is taken down, as a cable is cut:
// nothing more reaches the host, not even a reset (ss shows the host's
// connection still established while the launch waits). The launch must
// fail within the liveness timeout saying that the executor stopped
// answering, its output zeroed and its session closed; once the link is
// back, a new session works. The link is cut once while the host sends a
// launch's input and once while it receives the output.
//
// ctest runs it as netlab.linkcut, through `tools/netlab run` and
// `tools/netlab exec host`, which name the lab in CATALYST_REMOTE_NETLAB;
// without a lab it skips.
//
//===----------------------------------------------------------------------===//

#include "Command.h"
#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Pace.h"
#include "Text.h"
#include "TokenFile.h"

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// tools/netlab's addresses and the exec end of its veth.
constexpr const char *ExecAddr = "10.77.0.2";
constexpr const char *ExecDev = "e0";

constexpr auto Liveness = 2000ms;
// How late past the liveness timeout the launch may end: a stalled send
// looks again every quarter of the timeout, and the machine is shared.
constexpr auto Slack = paced(3000ms);
// The launch moves this much each way, some 1.1 s at 1 Gbit/s; the link is
// cut once a few tenths of it went through.
constexpr int64_t LaunchBytes = int64_t(128) << 20;
constexpr uint64_t CutAfter = uint64_t(16) << 20;

// A command found on PATH (ip and ss live in /usr/sbin or /sbin).
CommandResult run(std::vector<std::string> Argv) {
  Argv.insert(Argv.begin(), "/usr/bin/env");
  return runCommand(Argv);
}

// What ss says of the host's established connection to Address.
struct Flow {
  bool Found = false;
  uint64_t Acked = 0;    // bytes the executor acknowledged
  uint64_t Received = 0; // bytes that came from it
  uint64_t Unacked = 0;  // segments sent and not acknowledged
  std::string Raw;
};

uint64_t field(const std::string &Text, const std::string &Key) {
  size_t At = Text.find(" " + Key + ":");
  return At == std::string::npos ? 0
                                 : std::strtoull(Text.c_str() + At + Key.size() + 2, nullptr, 10);
}

Flow flowTo(const std::string &Address) {
  CommandResult R = run({"ss", "-Htin", "state", "established", "dst", Address});
  Flow F;
  F.Raw = R.Output;
  F.Found = R.ExitStatus == 0 && mentions(R.Output, "bytes_sent:");
  F.Acked = field(R.Output, "bytes_acked");
  F.Received = field(R.Output, "bytes_received");
  F.Unacked = field(R.Output, "unacked");
  return F;
}

// The lab's executor, started in its exec namespace with a secret, and
// sessions to it across the link.
class LabTest : public ::testing::Test {
protected:
  void SetUp() override {
    const char *Lab = std::getenv("CATALYST_REMOTE_NETLAB");
    if (!Lab || !*Lab)
      GTEST_SKIP() << "needs a network lab: run as ctest -R netlab.linkcut (tools/netlab run)";
    ExecNs = std::string("crb-exec-") + Lab;
    ExecutorOptions Opts;
    Opts.Prefix = {"/usr/bin/env", "ip", "netns", "exec", ExecNs};
    Opts.Bind = std::string(ExecAddr) + ":0";
    Opts.Args = {"--token-file", Token.path()};
    ASSERT_TRUE(Exec.start(Opts));
  }

  void TearDown() override {
    if (Cut)
      setLink(true);
  }

  void setLink(bool Up) {
    CommandResult R = run({"ip", "-n", ExecNs, "link", "set", ExecDev, Up ? "up" : "down"});
    ASSERT_EQ(R.ExitStatus, 0) << R.Output;
    Cut = !Up;
  }

  SessionOptions options(Strategy S, std::chrono::milliseconds Timeout) {
    SessionOptions O;
    O.Strategy = S;
    O.Secret = SecretBytes::copyOf(Token.secret());
    O.LivenessTimeout = Timeout;
    return O;
  }

  // Right after the link comes back, the host may still hold the neighbour
  // entry that failed during the cut ("No route to host") for a moment.
  std::unique_ptr<Session> openOnceTheLinkIsBack(Strategy S) {
    auto Deadline = Clock::now() + 10s;
    for (;;) {
      auto Sess = Session::open(Exec.address(), options(S, Liveness));
      if (Sess) {
        EXPECT_EQ(messageOf((*Sess)->sendBinary(kernelObject("concat"), BinaryFormat::Object)), "");
        return std::move(*Sess);
      }
      std::string Why = llvm::toString(Sess.takeError());
      if (Clock::now() > Deadline) {
        ADD_FAILURE() << "no new session within 10 s of the link coming back: " << Why;
        return nullptr;
      }
      std::this_thread::sleep_for(100ms);
    }
  }

  TokenFile Token;
  ExecutorProcess Exec;
  std::string ExecNs;
  bool Cut = false;
};

enum class Leg { Sending, Receiving };

class LinkCutTest : public LabTest,
                    public ::testing::WithParamInterface<std::tuple<Strategy, Leg>> {};

TEST_P(LinkCutTest, ALaunchEndsWithinTheLivenessTimeoutAndANewSessionWorks) {
  auto [Strat, L] = GetParam();
  auto S = openWithConcat(Exec.address(), Strat, options(Strat, Liveness));
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(17);
  auto In = makeInput(Layout::Dense, {LaunchBytes}, 1, Rng);
  Desc Out(1, 1);
  Out.poison();
  std::string Msg;
  Clock::time_point Ended;
  std::atomic<bool> Done{false};
  std::thread Launch([&] {
    Msg = messageOf(S->launch(
        {remoteEntry("concat_1"), "concat.o", {{In->D.data(), 1, 1}}, {{Out.data(), 1, 1}}}));
    Ended = Clock::now();
    Done = true;
  });

  // Cut once the leg is under way.
  Flow F;
  auto Deadline = Clock::now() + 60s;
  while (!Done && Clock::now() < Deadline) {
    F = flowTo(Exec.address());
    if ((L == Leg::Sending ? F.Acked : F.Received) >= CutAfter)
      break;
    std::this_thread::sleep_for(5ms);
  }
  if (!Done && Clock::now() < Deadline)
    setLink(false);
  auto CutAt = Clock::now();
  bool Midway = Cut && !Done;
  std::this_thread::sleep_until(CutAt + Liveness / 2);
  Flow During = flowTo(Exec.address());
  Launch.join();
  ASSERT_TRUE(Midway) << "the link was not cut while the launch moved its bytes; last seen: "
                      << F.Raw << (Msg.empty() ? "" : "; the launch said: " + Msg);

  // No reset: the host's end of the connection is still there, waiting.
  EXPECT_TRUE(During.Found) << "the connection was gone before the liveness timeout";
  if (L == Leg::Sending) {
    EXPECT_GT(During.Unacked, 0u) << During.Raw;
  }
  auto Took = std::chrono::duration_cast<std::chrono::milliseconds>(Ended - CutAt);
  EXPECT_TRUE(mentions(Msg, "stopped answering")) << Msg;
  EXPECT_TRUE(mentions(Msg, Exec.address())) << Msg;
  EXPECT_GE(Took, Liveness * 3 / 4) << Msg;
  EXPECT_LT(Took, Liveness + Slack) << Msg;
  EXPECT_TRUE(Out.allZero()) << "a failed launch leaves its outputs zeroed";
  EXPECT_FALSE(S->connected()) << "the session is closed";

  std::cout << "cut after " << (L == Leg::Sending ? F.Acked : F.Received) / (1 << 20)
            << " MiB; the launch ended " << Took.count() << " ms later: " << Msg << "\n";

  setLink(true);
  auto Again = openOnceTheLinkIsBack(Strat);
  ASSERT_TRUE(Again);
  EXPECT_TRUE(concatMatches(*Again, byteInputs({4096}, Rng)));
}

// The other side of liveness: over a link where a launch's input and its
// output each take longer than the liveness timeout to move, a healthy
// executor is never declared dead, whichever way the bytes go (a reply is
// due from the moment a request starts out). 128 MiB take 1.1 s or more
// each way at 1 Gbit/s, twice the timeout; a shorter one is cut now and
// then on a loaded machine by scheduling alone (a 300 ms timeout was, with
// four suites on two cores), which is not what this test is about.
constexpr auto LongTransferLiveness = 600ms;

class LongTransferTest : public LabTest, public ::testing::WithParamInterface<Strategy> {};

TEST_P(LongTransferTest, ATransferLongerThanTheLivenessTimeoutIsNeverCut) {
  auto S = openWithConcat(Exec.address(), GetParam(), options(GetParam(), LongTransferLiveness));
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(23);
  auto Start = Clock::now();
  EXPECT_TRUE(concatMatches(*S, byteInputs({LaunchBytes}, Rng)));
  auto Took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - Start);
  std::cout << "a launch of 2 x " << (LaunchBytes >> 20) << " MiB took " << Took.count()
            << " ms with a liveness timeout of " << LongTransferLiveness.count() << " ms\n";
  EXPECT_TRUE(S->connected());
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, LongTransferTest,
                         ::testing::Values(Strategy::ZeroCopy, Strategy::Batched, Strategy::Naive),
                         [](const auto &Info) { return strategyTestName(Info.param); });

const char *legName(Leg L) {
  return L == Leg::Sending ? "WhileSending" : "WhileReceiving";
}

INSTANTIATE_TEST_SUITE_P(Cut, LinkCutTest,
                         ::testing::Combine(::testing::Values(Strategy::ZeroCopy,
                                                              Strategy::Batched),
                                            ::testing::Values(Leg::Sending, Leg::Receiving)),
                         [](const auto &Info) {
                           return std::string(strategyTestName(std::get<0>(Info.param))) + "_" +
                                  legName(std::get<1>(Info.param));
                         });

} // namespace
