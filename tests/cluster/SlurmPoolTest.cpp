//===- SlurmPoolTest.cpp - A pool of executors Slurm started --------------===//
//
// Four executors started by srun --kill-on-bad-exit=0 make one pool
// (pool:DIR): launches spread over them and come back right; a member
// killed outright mid-launch fails that launch naming the member, or, with
// retry allowed, has it run again on another; the others carry on; and
// the job's end empties the pool.
//
//===----------------------------------------------------------------------===//

#include "ClusterHarness.h"
#include "EngineHarness.h"
#include "Kernels.h"
#include "Procfs.h"
#include "Text.h"

#include <csignal>
#include <mutex>
#include <thread>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

class SlurmPoolTest : public SlurmTest {
protected:
  std::unique_ptr<Pool> openPool(size_t Min, bool Retry) {
    PoolOptions O;
    O.MinMembers = Min;
    O.RetryOnMemberLoss = Retry;
    O.PollInterval = 100ms;
    O.Member.Transport = TransportKind::Tcp;
    auto Secret = readTokenFile(Token.path());
    EXPECT_TRUE(bool(Secret));
    if (Secret)
      O.Member.Secret = std::move(*Secret);
    O.Report = [this](llvm::StringRef Line) {
      std::lock_guard<std::mutex> L(ReportMutex);
      Reports.push_back(Line.str());
    };
    auto P = Pool::open("pool:" + announceDir(), O);
    if (!P) {
      ADD_FAILURE() << llvm::toString(P.takeError());
      return nullptr;
    }
    EXPECT_EQ(messageOf((*P)->sendBinary(kernelObject("member"), BinaryFormat::Object)), "");
    return std::move(*P);
  }

  // Runs whose_flag ({1500 ms, Tag}) on P and, once it runs, kills the
  // executor running it with SIGKILL, its connection processes too, as a
  // node going down. Returns the launch's error ("" when it succeeded);
  // Ran gets the executor that returned the result, Killed the one killed.
  std::string launchAndKillItsMember(Pool &P, int64_t Tag, pid_t &Killed, pid_t &Ran) {
    std::string Flag = Cluster.path("running." + std::to_string(Tag));
    auto FlagArg = makeDenseInput<char>({int64_t(Flag.size() + 1)},
                                        std::vector<char>(Flag.begin(), Flag.end() + 1));
    auto In = makeDenseInput<int64_t>({2}, {1500, Tag});
    Desc Out(1, 8);
    std::string Result;
    std::thread Launch([&] {
      MemrefArg Args[] = {{In->D.data(), 1, 8}, {FlagArg->D.data(), 1, 1}},
                Outs[] = {{Out.data(), 1, 8}};
      Result = messageOf(P.launch({remoteEntry("whose_flag"), "member.o", Args, Outs}));
    });
    std::string Pid;
    waitUntil([&] { return (Pid = readFile(Flag)).find('\n') != std::string::npos; }, 10s);
    Killed = pid_t(std::atoll(Pid.c_str()));
    std::vector<pid_t> Connections;
    for (pid_t C : executorsAnnouncingIn(announceDir()))
      if (parentOf(C) == Killed)
        Connections.push_back(C);
    if (Killed > 0)
      ::kill(Killed, SIGKILL);
    for (pid_t C : Connections)
      ::kill(C, SIGKILL);
    Launch.join();
    std::vector<int64_t> Got = as<int64_t>(Out.values());
    Ran = Got.size() == 2 && Got[0] == Tag ? pid_t(Got[1]) : -1;
    std::free(Out.allocated());
    return Result;
  }

  std::mutex ReportMutex;
  std::vector<std::string> Reports;
};

TEST_F(SlurmPoolTest, APoolOfSrunExecutorsRunsRightAndSurvivesLostMembers) {
  BackgroundCommand Srun;
  unsigned Job = 0;
  ASSERT_TRUE(startExecutors(4, Srun, "pool4", Job, {"--kill-on-bad-exit=0"}));
  auto Strict = openPool(4, /*Retry=*/false);
  ASSERT_TRUE(Strict);
  size_t Used = 0;
  ASSERT_TRUE(poolLaunchesRight(*Strict, 32, Used));
  EXPECT_EQ(Used, 4u) << "every member ran some";

  // Without retry: the launch fails, naming the member it was lost with.
  pid_t Killed = -1, Ran = -1;
  std::string Msg = launchAndKillItsMember(*Strict, 1, Killed, Ran);
  ASSERT_GT(Killed, 0);
  EXPECT_TRUE(mentions(Msg, "the member was lost")) << Msg;
  EXPECT_TRUE(waitUntil([&] { return Strict->members() == 3; }, 10s));
  EXPECT_TRUE(poolLaunchesRight(*Strict, 12, Used)) << "the others carry on";
  EXPECT_EQ(Used, 3u);

  // With retry: the launch runs again on another member, and is right.
  auto Lenient = openPool(3, /*Retry=*/true);
  ASSERT_TRUE(Lenient);
  pid_t Killed2 = -1;
  EXPECT_EQ(launchAndKillItsMember(*Lenient, 2, Killed2, Ran), "");
  EXPECT_GT(Ran, 0);
  EXPECT_NE(Ran, Killed2);
  EXPECT_EQ(Lenient->stats().Retried, 1u);
  EXPECT_TRUE(Srun.running()) << "srun --kill-on-bad-exit=0 keeps the step going";

  // The job's end: the two left withdraw their announcements and end; the
  // pools lose every member, and removed the killed ones' files, which
  // nobody held a lock on any more.
  ASSERT_EQ(Cluster.scancel(Job).ExitStatus, 0);
  EXPECT_TRUE(waitUntil([&] { return executorsAnnouncingIn(announceDir()).empty(); }, EndTimeout));
  EXPECT_TRUE(waitUntil([&] { return Strict->members() == 0 && Lenient->members() == 0; }, 10s));
  EXPECT_TRUE(waitUntil([&] { return announcements(announceDir()).empty(); }, 10s))
      << "a killed member's file outlived its lock";
  std::lock_guard<std::mutex> L(ReportMutex);
  for (const std::string &R : Reports)
    EXPECT_EQ(countOf(R, "dropped") + countOf(R, "cannot join"), 1u) << R;
}

} // namespace
