//===- ClusterHarness.cpp - Executors started by a cluster's launcher -----===//

#include "ClusterHarness.h"

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Procfs.h"

#include <algorithm>
#include <dirent.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace catalyst::remote::test {

std::vector<std::string> executorCommand(const std::string &Dir, const std::string &TokenPath) {
  return {executorPath(), "--bind", "127.0.0.1:0", "--token-file", TokenPath, "--announce", Dir};
}

std::vector<std::string> announcements(const std::string &Dir) {
  std::vector<std::string> Names;
  DIR *D = ::opendir(Dir.c_str());
  if (!D)
    return Names;
  while (dirent *E = ::readdir(D)) {
    std::string Name = E->d_name;
    if (Name[0] != '.' && Name.size() > 5 && Name.compare(Name.size() - 5, 5, ".addr") == 0)
      Names.push_back(Name);
  }
  ::closedir(D);
  std::sort(Names.begin(), Names.end());
  return Names;
}

::testing::AssertionResult waitForAnnouncements(const std::string &Dir, size_t N,
                                                std::vector<std::string> &Names) {
  if (waitUntil([&] { return (Names = announcements(Dir)).size() == N; }, AnnounceTimeout))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << Names.size() << " announcements in " << Dir << " after "
                                       << AnnounceTimeout.count() << " s, not " << N;
}

std::string announcedAddress(const std::string &Dir, const std::string &Name) {
  std::string Text = readFile(Dir + "/" + Name);
  return Text.substr(0, Text.find('\n'));
}

::testing::AssertionResult servesSessions(const std::string &Address,
                                          const std::string &TokenPath) {
  SessionOptions O;
  O.Transport = TransportKind::Tcp;
  auto Secret = readTokenFile(TokenPath);
  if (!Secret)
    return ::testing::AssertionFailure() << llvm::toString(Secret.takeError());
  O.Secret = std::move(*Secret);
  auto S = Session::open(Address, O);
  if (!S)
    return ::testing::AssertionFailure() << Address << ": " << llvm::toString(S.takeError());
  if (auto Err = (*S)->ping())
    return ::testing::AssertionFailure() << Address << ": ping: " << llvm::toString(std::move(Err));
  if (auto Err = (*S)->sendBinary(kernelObject("concat"), BinaryFormat::Object))
    return ::testing::AssertionFailure() << Address << ": " << llvm::toString(std::move(Err));
  std::mt19937_64 Rng(std::hash<std::string>()(Address));
  auto R = concatMatches(**S, byteInputs({3, 1000, 65536}, Rng));
  if (auto Err = (*S)->close())
    return ::testing::AssertionFailure()
           << Address << ": close: " << llvm::toString(std::move(Err));
  return R;
}

::testing::AssertionResult poolLaunchesRight(Pool &P, size_t Launches, size_t &Used) {
  if (auto Err = P.sendBinary(kernelObject("concat"), BinaryFormat::Object))
    return ::testing::AssertionFailure() << llvm::toString(std::move(Err));
  std::mt19937_64 Rng(42);
  struct Launch {
    std::vector<std::unique_ptr<Input>> Ins;
    std::vector<MemrefArg> Args;
    Desc Out{1, 1};
    MemrefArg Outs[1] = {{Out.data(), 1, 1}};
    ~Launch() { std::free(Out.allocated()); }
  };
  std::vector<std::unique_ptr<Launch>> All;
  std::vector<uint64_t> Tickets;
  for (size_t I = 0; I < Launches; ++I) {
    auto L = std::make_unique<Launch>();
    L->Ins = byteInputs({int64_t(I), 1000, int64_t(4096 + I)}, Rng);
    for (const auto &In : L->Ins)
      L->Args.push_back({In->D.data(), 1, 1});
    Tickets.push_back(P.launchAsync({remoteEntry("concat_3"), "concat.o", L->Args, L->Outs}));
    All.push_back(std::move(L));
  }
  for (size_t I = 0; I < Launches; ++I) {
    if (auto Err = P.await(Tickets[I]))
      return ::testing::AssertionFailure()
             << "launch " << I << ": " << llvm::toString(std::move(Err));
    std::vector<void *> Av;
    for (const auto &In : All[I]->Ins)
      Av.push_back(In->D.data());
    Desc Local(1, 1);
    hostEntry("concat", "concat_3")(Local.data(), Av.data());
    bool Same = Local.values() == All[I]->Out.values();
    std::free(Local.allocated());
    if (!Same)
      return ::testing::AssertionFailure()
             << "launch " << I << ": output differs from the local kernel's";
  }
  Used = 0;
  for (const PoolMemberStats &M : P.stats().Members)
    Used += M.Healthy && M.Session.Launches > 0;
  return ::testing::AssertionSuccess();
}

std::vector<pid_t> executorsAnnouncingIn(const std::string &Dir) {
  return processesRunning(executorPath(), Dir);
}

pid_t executorWhere(const std::string &Dir, const std::string &Variable, const std::string &Value) {
  std::vector<pid_t> All = executorsAnnouncingIn(Dir);
  for (pid_t P : All) {
    // A listener's parent is the launcher's, never another executor.
    if (std::find(All.begin(), All.end(), parentOf(P)) == All.end() &&
        environmentOf(P, Variable) == Value)
      return P;
  }
  return -1;
}

::testing::AssertionResult waitUntilAllGone(const std::string &Dir,
                                            std::chrono::milliseconds Timeout) {
  std::vector<std::string> Files;
  std::vector<pid_t> Pids;
  auto Gone = [&] {
    Files = announcements(Dir);
    Pids = executorsAnnouncingIn(Dir);
    return Files.empty() && Pids.empty();
  };
  if (waitUntil(Gone, Timeout))
    return ::testing::AssertionSuccess();
  auto R = ::testing::AssertionFailure();
  R << "after " << Timeout.count() << " ms, " << Files.size() << " announcements";
  for (const std::string &F : Files)
    R << " " << F;
  R << " and " << Pids.size() << " executor processes";
  for (pid_t P : Pids)
    R << " " << P;
  return R << " are left";
}

::testing::AssertionResult waitUntilAllGoneForAHost(const std::string &Dir,
                                                    std::chrono::milliseconds Timeout) {
  PoolOptions O;
  O.MinMembers = 0;
  O.PollInterval = std::chrono::milliseconds(50);
  // Members it cannot join (it has no token) are what it would report.
  O.Report = [](llvm::StringRef) {};
  auto Host = Pool::open("pool:" + Dir, O);
  if (!Host)
    return ::testing::AssertionFailure()
           << "a host cannot read " << Dir << ": " << llvm::toString(Host.takeError());
  return waitUntilAllGone(Dir, Timeout);
}

void SlurmTest::SetUp() {
  if (std::string Package = SlurmCluster::missingPackage(); !Package.empty())
    GTEST_SKIP() << "Slurm is not installed: needs the Debian package " << Package
                 << " (tools/bootstrap installs it where apt has it)";
  // slurmd starts job steps as their user only when it runs as root (it
  // does here: SlurmdUser=root), and munged and the cluster's folders are
  // set up for that.
  if (::geteuid() != 0)
    GTEST_SKIP() << "the Slurm tests bring up slurmd, which must run as root";
  ASSERT_TRUE(Cluster.start());
  AnnounceDir = Cluster.path("announce");
  ASSERT_EQ(::mkdir(AnnounceDir.c_str(), 0700), 0) << AnnounceDir;
}

::testing::AssertionResult SlurmTest::startExecutors(unsigned N, BackgroundCommand &Srun,
                                                     const std::string &Name, unsigned &Job,
                                                     const std::vector<std::string> &SrunArgs) {
  std::vector<std::string> Args = {"-n", std::to_string(N), "-J", Name};
  Args.insert(Args.end(), SrunArgs.begin(), SrunArgs.end());
  for (const std::string &A : executorCommand(AnnounceDir, Token.path()))
    Args.push_back(A);
  if (auto R = Cluster.srunInBackground(Srun, Args, Cluster.path(Name + ".out")); !R)
    return R;
  std::vector<std::string> Names;
  if (auto R = waitForAnnouncements(AnnounceDir, N, Names); !R)
    return R << "; srun " << (Srun.running() ? "runs" : Srun.status()) << ":\n" << Srun.output();
  Job = Cluster.jobNamed(Name);
  if (!Job)
    return ::testing::AssertionFailure() << "squeue knows no job " << Name;
  return ::testing::AssertionSuccess();
}

} // namespace catalyst::remote::test
