//===- PoolTest.cpp - Many executors reached by one address ---------------===//
//
// Real executors, listed or announcing themselves in a directory, used as
// one pool: launches spread and come back right, files reach members that
// join late, members that stop or die are dropped and reported once, and a
// launch whose member dies fails naming it or, when allowed, runs again on
// another member. The kernel whose.o says which executor ran each launch.
//
//===----------------------------------------------------------------------===//

#include "catalyst/remote/Pool.h"

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Kernels.h"
#include "Memref.h"
#include "Pace.h"
#include "Procfs.h"
#include "Sockets.h"
#include "TempDir.h"
#include "Text.h"
#include "TraceReader.h"
#include "catalyst/remote/Failure.h"

#include <atomic>
#include <csignal>
#include <dirent.h>
#include <fstream>
#include <map>
#include <mutex>
#include <poll.h>
#include <set>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace std::chrono_literals;

namespace {

// The announcement files in Dir, as a host reading pool:DIR takes them.
std::vector<std::string> announcedIn(const std::string &Dir) {
  std::vector<std::string> Names;
  if (DIR *D = ::opendir(Dir.c_str())) {
    while (dirent *E = ::readdir(D)) {
      std::string Name = E->d_name;
      if (Name[0] != '.' && Name.size() > 5 && Name.compare(Name.size() - 5, 5, ".addr") == 0)
        Names.push_back(Name);
    }
    ::closedir(D);
  }
  return Names;
}

using Clock = std::chrono::steady_clock;

// One launch of whose: sleeps Ms, returns {Tag, the executor's pid}.
struct Whose {
  std::unique_ptr<Input> In;
  Desc Out{1, 8};
  int64_t Tag;
  Whose(int64_t Ms, int64_t Tag) : In(makeDenseInput<int64_t>({2}, {Ms, Tag})), Tag(Tag) {
    Out.poison();
  }
  ~Whose() { std::free(Out.allocated()); }
  MemrefArg in() { return {In->D.data(), 1, 8}; }
  MemrefArg out() { return {Out.data(), 1, 8}; }
  LaunchCall call() {
    Args = {in()};
    Outs = {out()};
    return {Entry, "member.o", Args, Outs};
  }
  // The executor's pid, once the output is checked to be this launch's.
  ::testing::AssertionResult ranOn(pid_t &Pid) const {
    auto V = Out.values();
    if (Out.sizes() != std::vector<int64_t>{2} || V.size() != 16)
      return ::testing::AssertionFailure() << "launch " << Tag << ": no two-element output";
    int64_t Got[2];
    std::memcpy(Got, V.data(), 16);
    if (Got[0] != Tag)
      return ::testing::AssertionFailure() << "launch " << Tag << " got launch " << Got[0] << "'s";
    Pid = pid_t(Got[1]);
    return ::testing::AssertionSuccess();
  }

  std::string Entry = remoteEntry("whose");
  std::vector<MemrefArg> Args, Outs;
};

class PoolTest : public ::testing::Test {
protected:
  // Starts N executors on loopback ports, each also with Args.
  void start(size_t N, std::vector<std::string> Args = {}) {
    for (size_t I = 0; I < N; ++I)
      ASSERT_TRUE(startOne(Args));
  }

  ExecutorProcess *startOne(std::vector<std::string> Args = {}) {
    ExecutorOptions EO;
    EO.Bind = "127.0.0.1:0";
    EO.Args = std::move(Args);
    auto E = std::make_unique<ExecutorProcess>();
    if (!E->start(EO))
      return nullptr;
    Execs.push_back(std::move(E));
    return Execs.back().get();
  }

  std::string listAddress() const {
    std::string A = "pool:";
    for (const auto &E : Execs)
      A += (A.size() > 5 ? "," : "") + E->address();
    return A;
  }

  PoolOptions options(size_t Min = 1) {
    PoolOptions O;
    O.Member = forThisRun({});
    O.MinMembers = Min;
    O.PollInterval = 50ms;
    O.Report = [this](llvm::StringRef Line) {
      std::lock_guard<std::mutex> L(ReportMutex);
      Reports.push_back(Line.str());
    };
    return O;
  }

  std::unique_ptr<Pool> open(const std::string &Address, const PoolOptions &O) {
    auto P = Pool::open(Address, O);
    if (!P) {
      ADD_FAILURE() << llvm::toString(P.takeError());
      return nullptr;
    }
    EXPECT_EQ(messageOf((*P)->sendBinary(kernelObject("member"), BinaryFormat::Object)), "");
    return std::move(*P);
  }

  // N listed executors, all members, retrying on loss or not.
  std::unique_ptr<Pool> openList(size_t N, bool Retry = false) {
    start(N);
    PoolOptions O = options(N);
    O.RetryOnMemberLoss = Retry;
    return open(listAddress(), O);
  }

  std::vector<std::string> reports() {
    std::lock_guard<std::mutex> L(ReportMutex);
    return Reports;
  }

  // Waits up to Limit for the pool to have N healthy members.
  static bool waitForMembers(Pool &P, size_t N, std::chrono::milliseconds Limit = paced(10s)) {
    auto Deadline = Clock::now() + Limit;
    while (P.members() != N && Clock::now() < Deadline)
      std::this_thread::sleep_for(20ms);
    return P.members() == N;
  }

  // Which executors pids name, by index in Execs; -1 for none of them.
  int indexOf(pid_t Pid) const {
    for (size_t I = 0; I < Execs.size(); ++I)
      if (Execs[I]->pid() == Pid)
        return int(I);
    return -1;
  }

  // Two 300 ms launches at once, one on each member of a pool of two.
  static ::testing::AssertionResult bothMembersRun(Pool &P) {
    Whose A(300, 1), B(300, 2);
    uint64_t TA = P.launchAsync(A.call()), TB = P.launchAsync(B.call());
    std::string Failed = messageOf(P.await(TA)) + messageOf(P.await(TB));
    if (!Failed.empty())
      return ::testing::AssertionFailure() << Failed;
    pid_t PA, PB;
    if (auto R = A.ranOn(PA); !R)
      return R;
    if (auto R = B.ranOn(PB); !R)
      return R;
    if (PA == PB)
      return ::testing::AssertionFailure() << "both ran on executor " << PA;
    return ::testing::AssertionSuccess();
  }

  // How many of the launches the host drew in T ran on each executor (by
  // index in Execs, -1 for none of them), as T names their processes.
  std::map<int, size_t> launchesByMember(const Trace &T) const {
    std::map<int, size_t> Out;
    for (const TraceSpan *S : T.named("launch ")) {
      if (S->Pid != ::getpid())
        continue;
      auto Name = T.Processes.find(S->intArg("executor_pid"));
      int Ran = -1;
      for (size_t I = 0; I < Execs.size() && Name != T.Processes.end(); ++I)
        if (mentions(Name->second, Execs[I]->address() + " (connection process)"))
          Ran = int(I);
      ++Out[Ran];
    }
    return Out;
  }

  std::vector<std::unique_ptr<ExecutorProcess>> Execs;
  std::mutex ReportMutex;
  std::vector<std::string> Reports;
};

TEST_F(PoolTest, BlockingLaunchesSpreadOverEveryListedMemberAndComeBackRight) {
  auto P = openList(4);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->members(), 4u);
  std::set<int> Used;
  for (int64_t Tag = 0; Tag < 16; ++Tag) {
    Whose W(0, Tag);
    ASSERT_EQ(messageOf(P->launch(W.call())), "");
    pid_t Pid;
    ASSERT_TRUE(W.ranOn(Pid));
    Used.insert(indexOf(Pid));
  }
  EXPECT_EQ(Used, (std::set<int>{0, 1, 2, 3})) << "ties go to the member that ran the fewest";
  PoolStats S = P->stats();
  EXPECT_EQ(S.Launches, 16u);
  ASSERT_EQ(S.Members.size(), 4u);
  for (const PoolMemberStats &M : S.Members) {
    EXPECT_TRUE(M.Healthy);
    EXPECT_EQ(M.Session.Launches, 4u) << M.Name;
  }
  EXPECT_EQ(messageOf(P->close()), "");
  auto [Kind, Msg] = failureOf(P->callWrapper("anything", {}).takeError());
  EXPECT_EQ(Kind, FailureKind::Closed) << Msg;
  EXPECT_EQ(Msg, P->address().str() + ": the pool is closed");
  // A launch on the closed pool fails so too, its outputs zeroed (W frees
  // what they point at: a poisoned pointer would crash here).
  Whose Late(0, 99);
  auto [LateKind, LateMsg] = failureOf(P->launch(Late.call()));
  EXPECT_EQ(LateKind, FailureKind::Closed) << LateMsg;
}

// The two int64 values a descriptor holds.
std::vector<int64_t> twoValues(const Desc &D) {
  auto V = D.values();
  if (V.size() != 16)
    return {};
  std::vector<int64_t> Out(2);
  std::memcpy(Out.data(), V.data(), 16);
  return Out;
}

// A call of whose on a resident, its output kept or not.
struct OnResident {
  explicit OnResident(const Resident &R, Resident *Keep = nullptr) : Args{MemrefArg::of(R)} {
    Out.poison();
    if (Keep)
      Keeps = {Keep};
  }
  ~OnResident() { std::free(Out.allocated()); }
  LaunchCall call() {
    Outs = {{Out.data(), 1, 8}};
    return {Entry, "member.o", Args, Outs, {}, Keeps};
  }
  std::string Entry = remoteEntry("whose");
  std::vector<MemrefArg> Args, Outs;
  std::vector<Resident *> Keeps;
  Desc Out{1, 8};
};

// An upload reaches every member, compacted from any layout: launches that
// read it run anywhere and read the uploaded values; the pool fetches it
// from the host's own copy; a released one is refused.
TEST_F(PoolTest, AnUploadReachesEveryMemberAndLaunchesReadItAnywhere) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  // {0, 42} as every other element from the second: offset and strided.
  auto In = makeDenseInput<int64_t>({4}, {7, 0, 9, 42});
  In->D.setOffset(1);
  In->D.setSize(0, 2);
  In->D.setStride(0, 2);
  auto R = P->upload({In->D.data(), 1, 8});
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->shape(), llvm::ArrayRef<int64_t>({2}));
  std::set<int> Used;
  for (int I = 0; I < 4; ++I) {
    OnResident L(*R);
    ASSERT_EQ(messageOf(P->launch(L.call())), "");
    auto V = twoValues(L.Out);
    ASSERT_EQ(V.size(), 2u);
    EXPECT_EQ(V[0], 42);
    Used.insert(indexOf(pid_t(V[1])));
  }
  EXPECT_EQ(Used, (std::set<int>{0, 1}));
  for (const PoolMemberStats &M : P->stats().Members)
    EXPECT_EQ(M.Session.Residents.Uploads, 1u) << M.Name;
  Desc Back(1, 8);
  ASSERT_EQ(messageOf(P->fetch(*R, {Back.data(), 1, 8})), "");
  EXPECT_EQ(twoValues(Back), (std::vector<int64_t>{0, 42}));
  std::free(Back.allocated());
  Resident Copy = *R;
  ASSERT_EQ(messageOf(P->release(*R)), "");
  EXPECT_FALSE(*R);
  for (const PoolMemberStats &M : P->stats().Members)
    EXPECT_EQ(M.Session.Residents.Held, 0u) << M.Name << ": freed on every member";
  OnResident Late(Copy);
  auto [Kind, Msg] = failureOf(P->launch(Late.call()));
  EXPECT_EQ(Kind, FailureKind::BadArgument) << Msg;
  EXPECT_TRUE(mentions(Msg, "input 0, resident " + std::to_string(Copy.id()) + ", was released"))
      << Msg;
  EXPECT_TRUE(Late.Out.allZero());
  auto [ReleaseKind, ReleaseMsg] = failureOf(P->release(Copy));
  EXPECT_EQ(ReleaseKind, FailureKind::BadArgument) << ReleaseMsg;
  // Bad tensors are refused on the host, before any member sees them.
  auto [NullKind, NullMsg] = failureOf(P->upload({nullptr, 1, 8}).takeError());
  EXPECT_EQ(NullKind, FailureKind::BadArgument) << NullMsg;
  EXPECT_TRUE(mentions(NullMsg, "null descriptor")) << NullMsg;
  Desc Unmapped(1, 8);
  Unmapped.setAllocated(reinterpret_cast<void *>(0x1000));
  Unmapped.setAligned(reinterpret_cast<void *>(0x1000));
  Unmapped.setSize(0, 4);
  Unmapped.setStride(0, 1);
  auto [BadKind, BadMsg] = failureOf(P->upload({Unmapped.data(), 1, 8}).takeError());
  EXPECT_EQ(BadKind, FailureKind::BadArgument) << BadMsg;
  for (const PoolMemberStats &M : P->stats().Members)
    EXPECT_EQ(M.Session.Residents.Uploads, 1u) << M.Name << ": only the good one reached it";
}

// A kept output lives on the member that made it: every launch that reads
// it, blocking or async, runs there; it fetches from there; and a launch
// naming outputs kept on two members is refused before it runs.
TEST_F(PoolTest, KeptOutputsStayOnTheirMemberAndLaunchesThatReadThemRunThere) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  // Four kept outputs {3, pid}, spread over both members.
  std::vector<Resident> Kept(4);
  std::set<int> Homes;
  for (Resident &K : Kept) {
    Whose W(0, 3);
    LaunchCall Call = W.call();
    Resident *Keep[] = {&K};
    Call.Keep = Keep;
    ASSERT_EQ(messageOf(P->launch(Call)), "");
    ASSERT_TRUE(K);
    Desc Back(1, 8);
    ASSERT_EQ(messageOf(P->fetch(K, {Back.data(), 1, 8})), "");
    auto V = twoValues(Back);
    std::free(Back.allocated());
    ASSERT_EQ(V.size(), 2u);
    EXPECT_EQ(V[0], 3);
    Homes.insert(indexOf(pid_t(V[1])));
  }
  EXPECT_EQ(Homes, (std::set<int>{0, 1}));
  // whose on {3, pid} sleeps 3 ms and says {pid, the pid that ran it}.
  for (Resident &K : Kept) {
    for (int Round = 0; Round < 2; ++Round) {
      OnResident L(K);
      ASSERT_EQ(messageOf(P->launch(L.call())), "");
      auto V = twoValues(L.Out);
      ASSERT_EQ(V.size(), 2u);
      EXPECT_EQ(V[0], V[1]) << "ran away from the member that holds its input";
    }
    OnResident A(K);
    ASSERT_EQ(messageOf(P->await(P->launchAsync(A.call()))), "");
    auto V = twoValues(A.Out);
    ASSERT_EQ(V.size(), 2u);
    EXPECT_EQ(V[0], V[1]) << "an async launch ran away from its input's member";
  }
  // A chain: each launch reads the output the last one kept.
  Resident Next;
  {
    OnResident L(Kept[0], &Next);
    ASSERT_EQ(messageOf(P->launch(L.call())), "");
  }
  ASSERT_TRUE(Next);
  // Inputs kept on two members: refused, naming both inputs.
  size_t Other = 1;
  Desc Probe(1, 8);
  ASSERT_EQ(messageOf(P->fetch(Kept[0], {Probe.data(), 1, 8})), "");
  int64_t Home0 = twoValues(Probe)[1];
  std::free(Probe.allocated());
  for (; Other < Kept.size(); ++Other) {
    Desc D(1, 8);
    ASSERT_EQ(messageOf(P->fetch(Kept[Other], {D.data(), 1, 8})), "");
    int64_t H = twoValues(D)[1];
    std::free(D.allocated());
    if (H != Home0)
      break;
  }
  ASSERT_LT(Other, Kept.size());
  OnResident Both(Kept[0]);
  Both.Args.push_back(MemrefArg::of(Kept[Other]));
  auto [Kind, Msg] = failureOf(P->launch(Both.call()));
  EXPECT_EQ(Kind, FailureKind::BadArgument) << Msg;
  EXPECT_TRUE(mentions(Msg, "a launch runs on one member")) << Msg;
  for (Resident &K : Kept)
    EXPECT_EQ(messageOf(P->release(K)), "");
  EXPECT_EQ(messageOf(P->release(Next)), "");
  uint64_t Held = 0;
  for (const PoolMemberStats &M : P->stats().Members)
    Held += M.Session.Residents.Held;
  EXPECT_EQ(Held, 0u);
}

// A member that joins after an upload gets it before its first launch,
// from the host's copy.
TEST_F(PoolTest, AMemberThatJoinsLaterGetsTheUploadsBeforeItsFirstLaunch) {
  TempDir Dir;
  start(1, {"--announce", Dir.dir()});
  auto P = open("pool:" + Dir.dir(), options(1));
  ASSERT_TRUE(P);
  auto In = makeDenseInput<int64_t>({2}, {0, 42});
  auto R = P->upload({In->D.data(), 1, 8});
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  ASSERT_NE(startOne({"--announce", Dir.dir()}), nullptr);
  ASSERT_TRUE(waitForMembers(*P, 2));
  EXPECT_TRUE(Execs[0]->stop());
  ASSERT_TRUE(waitForMembers(*P, 1)) << "dropped once its announcement went";
  OnResident L(*R);
  ASSERT_EQ(messageOf(P->launch(L.call())), "");
  auto V = twoValues(L.Out);
  ASSERT_EQ(V.size(), 2u);
  EXPECT_EQ(V[0], 42);
  EXPECT_EQ(indexOf(pid_t(V[1])), 1);
  EXPECT_EQ(messageOf(P->release(*R)), "");
}

// Each await returns its own launch's result, whichever member ran it; a
// free member takes the next launch, so four long ones run on four.
TEST_F(PoolTest, AsyncLaunchesRunOnFreeMembersAndEachAwaitGetsItsOwn) {
  auto P = openList(4);
  ASSERT_TRUE(P);
  std::vector<std::unique_ptr<Whose>> Launches;
  std::vector<uint64_t> Tickets;
  for (int64_t Tag = 0; Tag < 12; ++Tag) {
    Launches.push_back(std::make_unique<Whose>(Tag < 4 ? 400 : 0, Tag));
    Tickets.push_back(P->launchAsync(Launches.back()->call()));
  }
  std::set<int> FirstFour;
  for (size_t I = Tickets.size(); I-- > 0;) { // out of order on purpose
    ASSERT_EQ(messageOf(P->await(Tickets[I])), "") << "launch " << I;
    pid_t Pid;
    ASSERT_TRUE(Launches[I]->ranOn(Pid));
    ASSERT_NE(indexOf(Pid), -1);
    if (I < 4)
      FirstFour.insert(indexOf(Pid));
  }
  EXPECT_EQ(FirstFour.size(), 4u) << "each long launch had a member of its own";
  EXPECT_EQ(messageOf(P->await(Tickets[0])), "")
      << "a ticket awaited before is nothing to wait for";
}

// The pool, not the thread scheduler, places asynchronous launches: idle
// members take turns, the one that ran the fewest first. Tiny launches,
// each over before the next is queued, still go round every member; so do
// the first four of many queued at once, whichever worker wakes first.
TEST_F(PoolTest, AsyncLaunchesTakeTurnsOverIdleMembers) {
  auto P = openList(4);
  ASSERT_TRUE(P);
  std::map<int, size_t> Count;
  for (int64_t Tag = 0; Tag < 8; ++Tag) {
    Whose W(0, Tag);
    ASSERT_EQ(messageOf(P->await(P->launchAsync(W.call()))), "") << "launch " << Tag;
    pid_t Pid;
    ASSERT_TRUE(W.ranOn(Pid));
    ++Count[indexOf(Pid)];
  }
  EXPECT_EQ(Count, (std::map<int, size_t>{{0, 2}, {1, 2}, {2, 2}, {3, 2}}));

  std::vector<std::unique_ptr<Whose>> Launches;
  std::vector<uint64_t> Tickets;
  for (int64_t Tag = 0; Tag < 32; ++Tag) {
    Launches.push_back(std::make_unique<Whose>(0, Tag));
    Tickets.push_back(P->launchAsync(Launches.back()->call()));
  }
  std::set<int> FirstFour;
  for (size_t I = 0; I < Tickets.size(); ++I) {
    ASSERT_EQ(messageOf(P->await(Tickets[I])), "") << "launch " << I;
    pid_t Pid;
    ASSERT_TRUE(Launches[I]->ranOn(Pid));
    if (I < 4)
      FirstFour.insert(indexOf(Pid));
  }
  EXPECT_EQ(FirstFour, (std::set<int>{0, 1, 2, 3}));
}

// A long launch on one member holds up neither the pool's stats nor a
// launch, which goes to the member that is free.
TEST_F(PoolTest, ALongLaunchHoldsUpNeitherStatsNorOtherLaunches) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  TempDir Flags;
  std::string Flag = Flags.path("running");
  auto FlagArg = makeDenseInput<char>({int64_t(Flag.size() + 1)},
                                      std::vector<char>(Flag.begin(), Flag.end() + 1));
  // Runs until the file goes: a minute at most, long past any load.
  Whose Long(paced(60000ms).count(), 1);
  MemrefArg Args[] = {Long.in(), {FlagArg->D.data(), 1, 1}}, Outs[] = {Long.out()};
  uint64_t T = P->launchAsync({remoteEntry("whose_gate"), "member.o", Args, Outs});
  ASSERT_TRUE(waitUntil([&] { return readFile(Flag).find('\n') != std::string::npos; }, paced(10s)))
      << "the long launch never started";
  PoolStats S = P->stats();
  Whose Short(0, 2);
  ASSERT_EQ(messageOf(P->launch(Short.call())), "");
  // Only now may the long launch end: had the short one waited for it,
  // the long one would have run out its minute and said so (tag -1).
  ASSERT_EQ(::unlink(Flag.c_str()), 0);
  EXPECT_EQ(S.Members.size(), 2u);
  pid_t LongOn, ShortOn;
  ASSERT_EQ(messageOf(P->await(T)), "");
  ASSERT_TRUE(Long.ranOn(LongOn));
  ASSERT_TRUE(Short.ranOn(ShortOn));
  EXPECT_NE(LongOn, ShortOn);
}

// Members come and go with their announcements; one that joins late gets
// the pool's objects before its first launch; one that stops is dropped
// and reported once.
TEST_F(PoolTest, MembersFollowTheDirectoryAndLateJoinersGetThePoolsObjects) {
  TempDir Dir;
  start(1, {"--announce", Dir.dir()});
  auto P = open("pool:" + Dir.dir(), options(1));
  ASSERT_TRUE(P);
  ASSERT_NE(startOne({"--announce", Dir.dir()}), nullptr);
  ASSERT_TRUE(waitForMembers(*P, 2));
  // Both members busy at once: the late one must have member.o to run its.
  ASSERT_TRUE(bothMembersRun(*P));
  EXPECT_TRUE(Execs[1]->stop());
  ASSERT_TRUE(waitForMembers(*P, 1)) << "dropped once its announcement went";
  auto R = reports();
  ASSERT_EQ(R.size(), 1u);
  EXPECT_TRUE(mentions(R[0], "dropped: its announcement was withdrawn")) << R[0];
  Whose C(0, 3);
  ASSERT_EQ(messageOf(P->launch(C.call())), "");
  pid_t PC;
  ASSERT_TRUE(C.ranOn(PC));
  EXPECT_EQ(indexOf(PC), 0);
  PoolStats S = P->stats();
  EXPECT_EQ(S.MembersLost, 1u);
  ASSERT_EQ(S.Members.size(), 2u);
  EXPECT_FALSE(S.Members[1].Healthy);
}

// An executor killed with SIGKILL (as Slurm kills a step whose srun
// ends) cannot withdraw its announcement; the lock it held on the file
// went with it, so the pool drops the member and removes the file.
TEST_F(PoolTest, AnExecutorKilledHardLeavesAFileThePoolRemoves) {
  TempDir Dir;
  start(2, {"--announce", Dir.dir()});
  auto P = open("pool:" + Dir.dir(), options(2));
  ASSERT_TRUE(P);
  ASSERT_TRUE(waitForMembers(*P, 2));
  std::vector<std::string> Before = announcedIn(Dir.dir());
  ASSERT_EQ(Before.size(), 2u);
  ASSERT_EQ(::kill(Execs[1]->pid(), SIGKILL), 0);
  ASSERT_TRUE(waitForMembers(*P, 1)) << "dropped once its executor was killed";
  EXPECT_TRUE(waitUntil([&] { return announcedIn(Dir.dir()).size() == 1; }, paced(10s)))
      << "the killed executor's file is still there";
  Whose C(0, 3);
  EXPECT_EQ(messageOf(P->launch(C.call())), "") << "the living member serves";
}

// Reading stats holds each member's session while the watcher releases
// the sessions of dropped members: a member dropped and released while a
// stats() call reads it must stay whole until the call lets go (a crash,
// or a race under TSan, when the watcher freed it under the reader).
TEST_F(PoolTest, StatsReadWhileDroppedMembersAreReleased) {
  TempDir Dir;
  start(1, {"--announce", Dir.dir()});
  auto P = open("pool:" + Dir.dir(), options(1));
  ASSERT_TRUE(P);
  std::atomic<bool> Done{false};
  std::atomic<uint64_t> Reads{0};
  std::thread Reader([&] {
    while (!Done) {
      PoolStats S = P->stats();
      Reads += S.Members.size() > 0;
    }
  });
  for (int Round = 0; Round < 8; ++Round) {
    ExecutorProcess *E = startOne({"--announce", Dir.dir()});
    ASSERT_NE(E, nullptr);
    ASSERT_TRUE(waitForMembers(*P, 2)) << "round " << Round;
    EXPECT_TRUE(E->stop());
    ASSERT_TRUE(waitForMembers(*P, 1)) << "round " << Round;
  }
  Done = true;
  Reader.join();
  EXPECT_GT(Reads.load(), 0u);
  EXPECT_EQ(P->stats().MembersLost, 8u);
}

// A test's view of a launch that runs on some member while the test kills
// that member outright (its listener and its connection processes), as a
// node that goes down.
class MemberLossTest : public PoolTest {
protected:
  // Runs whose_flag on the pool on another thread; returns once it runs,
  // with the member it runs on killed.
  void launchAndKillItsMember(Pool &P) {
    LaunchCall Call = flagged();
    Launch = std::thread([&, Call] { Result = failureOf(P.launch(Call)); });
    killTheMemberRunningIt();
    Launch.join();
  }

  // The call of whose_flag (K) that says in FlagPath where it runs.
  LaunchCall flagged() {
    FlagPath = Flags.path("running");
    FlagArg = makeDenseInput<char>({int64_t(FlagPath.size() + 1)},
                                   std::vector<char>(FlagPath.begin(), FlagPath.end() + 1));
    Args = {K.in(), {FlagArg->D.data(), 1, 1}};
    Outs = {K.out()};
    return {Entry, "member.o", Args, Outs};
  }

  // Once flagged() runs, kills the member it runs on: Victim.
  void killTheMemberRunningIt() {
    auto Deadline = Clock::now() + paced(10s);
    std::string Pid;
    while ((Pid = readFile(FlagPath)).find('\n') == std::string::npos && Clock::now() < Deadline)
      std::this_thread::sleep_for(10ms);
    Victim = indexOf(pid_t(std::atoll(Pid.c_str())));
    ASSERT_NE(Victim, -1) << "the launch never started: '" << Pid << "'";
    // The listener first, so that nothing can take a new session, then
    // its connection processes, which would otherwise finish the launch.
    std::vector<pid_t> Connections = Execs[Victim]->connectionPids();
    ::kill(Execs[Victim]->pid(), SIGKILL);
    for (pid_t C : Connections)
      ::kill(C, SIGKILL);
  }

  TempDir Flags;
  std::string FlagPath;
  std::unique_ptr<Input> FlagArg;
  std::vector<MemrefArg> Args, Outs;
  std::string Entry = remoteEntry("whose_flag");
  Whose K{1500, 7};
  std::thread Launch;
  FailureReport Result;
  int Victim = -1;
};

TEST_F(MemberLossTest, ALaunchWhoseMemberDiesFailsNamingItWithoutRetry) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  launchAndKillItsMember(*P);
  ASSERT_NE(Victim, -1);
  EXPECT_EQ(Result.Kind, FailureKind::ExecutorLost) << Result.Message;
  EXPECT_TRUE(mentions(Result.Message, "on member " + Execs[Victim]->address())) << Result.Message;
  EXPECT_TRUE(mentions(Result.Message, "the member was lost")) << Result.Message;
  EXPECT_TRUE(K.Out.allZero());
  EXPECT_EQ(P->members(), 1u);
  auto R = reports();
  ASSERT_EQ(R.size(), 1u) << "reported once";
  EXPECT_TRUE(mentions(R[0], Execs[Victim]->address() + " dropped")) << R[0];
  Whose Next(0, 8);
  EXPECT_EQ(messageOf(P->launch(Next.call())), "") << "the other member carries on";
}

TEST_F(MemberLossTest, WithRetryTheLaunchRunsAgainOnAnotherMember) {
  auto P = openList(2, /*Retry=*/true);
  ASSERT_TRUE(P);
  launchAndKillItsMember(*P);
  ASSERT_NE(Victim, -1);
  EXPECT_EQ(Result.Message, "");
  pid_t Ran;
  ASSERT_TRUE(K.ranOn(Ran));
  EXPECT_EQ(indexOf(Ran), 1 - Victim);
  EXPECT_EQ(P->stats().Retried, 1u);
}

// A kept output dies with its member: a launch or fetch that names it fails
// as ExecutorLost naming the member, even with retry on, and nothing runs
// elsewhere; release() forgets it.
TEST_F(PoolTest, AKeptOutputWhoseMemberDiesFailsNamingItAndIsNotRetried) {
  auto P = openList(2, /*Retry=*/true);
  ASSERT_TRUE(P);
  Resident K;
  {
    Whose W(0, 3);
    LaunchCall Call = W.call();
    Resident *Keep[] = {&K};
    Call.Keep = Keep;
    ASSERT_EQ(messageOf(P->launch(Call)), "");
  }
  Desc Back(1, 8);
  ASSERT_EQ(messageOf(P->fetch(K, {Back.data(), 1, 8})), "");
  int Home = indexOf(pid_t(twoValues(Back)[1]));
  std::free(Back.allocated());
  ASSERT_NE(Home, -1);
  std::vector<pid_t> Connections = Execs[Home]->connectionPids();
  ::kill(Execs[Home]->pid(), SIGKILL);
  for (pid_t C : Connections)
    ::kill(C, SIGKILL);
  OnResident L(K);
  auto [Kind, Msg] = failureOf(P->launch(L.call()));
  EXPECT_EQ(Kind, FailureKind::ExecutorLost) << Msg;
  EXPECT_TRUE(mentions(Msg, "member " + Execs[Home]->address())) << Msg;
  EXPECT_TRUE(L.Out.allZero());
  EXPECT_EQ(P->stats().Retried, 0u);
  ASSERT_TRUE(waitForMembers(*P, 1));
  auto [AsyncKind, AsyncMsg] = failureOf(P->await(P->launchAsync(L.call())));
  EXPECT_EQ(AsyncKind, FailureKind::ExecutorLost) << AsyncMsg;
  Desc Gone(1, 8);
  auto [FetchKind, FetchMsg] = failureOf(P->fetch(K, {Gone.data(), 1, 8}));
  EXPECT_EQ(FetchKind, FailureKind::ExecutorLost) << FetchMsg;
  EXPECT_TRUE(mentions(FetchMsg, Execs[Home]->address())) << FetchMsg;
  EXPECT_TRUE(Gone.allZero());
  EXPECT_EQ(messageOf(P->release(K)), "");
  EXPECT_EQ(P->stats().Retried, 0u);
}

// close() waits for every queued launch, one queued again after its
// member died included: the members still there keep serving until it
// has run, and close() returns.
TEST_F(MemberLossTest, CloseWaitsForALaunchRunAgainAfterItsMemberDied) {
  auto P = openList(2, /*Retry=*/true);
  ASSERT_TRUE(P);
  P->launchAsync(flagged());
  std::atomic<bool> Closed{false};
  std::string CloseError;
  std::thread Closer([&] {
    CloseError = messageOf(P->close());
    Closed = true;
  });
  // Once a launch is refused, close() has begun.
  auto Deadline = Clock::now() + paced(10s);
  while (Clock::now() < Deadline) {
    Whose Probe(0, 99);
    if (failureOf(P->await(P->launchAsync(Probe.call()))).Kind == FailureKind::Closed)
      break;
  }
  killTheMemberRunningIt();
  EXPECT_TRUE(waitUntil([&] { return Closed.load(); }, paced(10s)))
      << "close() still waits for the launch run again";
  Closer.join();
  EXPECT_EQ(CloseError, "") << "the launch failed, and nobody awaited it";
  pid_t Ran;
  ASSERT_TRUE(K.ranOn(Ran));
  EXPECT_EQ(indexOf(Ran), 1 - Victim);
}

// A kernel that kills its connection process leaves its executor serving:
// the launch fails as on a session, is not run elsewhere (it would crash
// that member too), and the member stays, with a new session.
TEST_F(PoolTest, AKernelThatCrashesIsNotAMemberLossNorRetried) {
  auto P = openList(2, /*Retry=*/true);
  ASSERT_TRUE(P);
  ASSERT_EQ(messageOf(P->sendBinary(kernelObject("deaths"), BinaryFormat::Object)), "");
  Desc Out(1, 1);
  auto [Kind, Msg] =
      failureOf(P->launch({remoteEntry("die_segv"), "deaths.o", {}, {{Out.data(), 1, 1}}}));
  EXPECT_EQ(Kind, FailureKind::KernelCrashed) << "the member's own kind: " << Msg;
  EXPECT_TRUE(mentions(Msg, "signal 11 (Segmentation fault)")) << Msg;
  PoolStats S = P->stats();
  EXPECT_EQ(S.Retried, 0u);
  EXPECT_EQ(S.MembersLost, 0u);
  EXPECT_EQ(P->members(), 2u);
  EXPECT_TRUE(reports().empty());
  for (int64_t Tag = 0; Tag < 4; ++Tag) {
    Whose W(0, Tag);
    EXPECT_EQ(messageOf(P->launch(W.call())), "") << "both members serve on";
  }
}

// Traced, a pool shows each member's launches on a track of its own on
// both sides: the executor's connection process, named by its address, and
// the host thread that ran that member's share of asynchronous launches.
TEST_F(PoolTest, ATracedPoolShowsEachMemberOnTracksOfItsOwn) {
  start(3);
  TempDir Dir;
  PoolOptions O = options(3);
  O.Member.TracePath = Dir.path("pool.json");
  auto P = open(listAddress(), O);
  ASSERT_TRUE(P);
  std::vector<std::unique_ptr<Whose>> Launches;
  std::vector<uint64_t> Tickets;
  for (int64_t Tag = 0; Tag < 6; ++Tag) {
    Launches.push_back(std::make_unique<Whose>(100, Tag));
    Tickets.push_back(P->launchAsync(Launches.back()->call()));
  }
  for (uint64_t T : Tickets)
    ASSERT_EQ(messageOf(P->await(T)), "");
  ASSERT_EQ(messageOf(P->close()), "");
  auto T = readTrace(O.Member.TracePath);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  std::set<std::string> Executors;
  for (const auto &[Pid, Name] : T->Processes)
    for (const auto &E : Execs)
      if (mentions(Name, E->address() + " (connection process)"))
        Executors.insert(E->address());
  EXPECT_EQ(Executors.size(), 3u) << "one executor track per member";
  std::set<std::pair<int64_t, int64_t>> Workers;
  for (const auto &[Track, Name] : T->Threads)
    if (mentions(Name, "pool member"))
      Workers.insert(Track);
  std::set<std::pair<int64_t, int64_t>> Launching;
  for (const TraceSpan *S : T->named("launch "))
    if (Workers.count({S->Pid, S->Tid}))
      Launching.insert({S->Pid, S->Tid});
  EXPECT_EQ(Launching.size(), 3u) << "each member's launches on a host track of its own";
}

// A trace started on an open pool reaches every member, each on tracks of
// its own; launches before it and after its stop are not in it.
TEST_F(PoolTest, ATraceStartedOnAnOpenPoolReachesEveryMember) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  TempDir Dir;
  std::string Path = Dir.path("pool.json");
  Whose Before(0, 0);
  ASSERT_EQ(messageOf(P->launch(Before.call())), "");
  ASSERT_EQ(messageOf(P->startTrace(Path)), "");
  // Long enough that both members take some (two each).
  std::vector<std::unique_ptr<Whose>> Launches;
  std::vector<uint64_t> Tickets;
  for (int64_t Tag = 1; Tag <= 4; ++Tag) {
    Launches.push_back(std::make_unique<Whose>(200, Tag));
    Tickets.push_back(P->launchAsync(Launches.back()->call()));
  }
  std::set<int> Ran;
  for (size_t I = 0; I < Tickets.size(); ++I) {
    ASSERT_EQ(messageOf(P->await(Tickets[I])), "");
    pid_t Pid;
    ASSERT_TRUE(Launches[I]->ranOn(Pid));
    Ran.insert(indexOf(Pid));
  }
  ASSERT_EQ(Ran, (std::set<int>{0, 1}));
  ASSERT_EQ(messageOf(P->stopTrace()), "");
  std::string Stopped = readFile(Path);
  Whose After(0, 5);
  ASSERT_EQ(messageOf(P->launch(After.call())), "");
  EXPECT_EQ(readFile(Path), Stopped) << "written after stopTrace returned";
  auto T = readTrace(Path);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  size_t Total = 0;
  for (auto [Member, Count] : launchesByMember(*T)) {
    EXPECT_TRUE(Ran.count(Member)) << "member " << Member;
    Total += Count;
  }
  EXPECT_EQ(Total, Launches.size());
  EXPECT_EQ(launchesByMember(*T).size(), 2u) << "each member's on its own executor track";
  EXPECT_EQ(T->named("trace ").size(), 2u) << "one start per member";
}

// A member that joins while the pool traces is traced from its opening,
// and the launches it takes are in the trace.
TEST_F(PoolTest, AMemberThatJoinsWhileThePoolTracesIsTraced) {
  TempDir Dir;
  start(1, {"--announce", Dir.dir()});
  auto P = open("pool:" + Dir.dir(), options(1));
  ASSERT_TRUE(P);
  TempDir Traces;
  std::string Path = Traces.path("pool.json");
  ASSERT_EQ(messageOf(P->startTrace(Path)), "");
  ASSERT_NE(startOne({"--announce", Dir.dir()}), nullptr);
  ASSERT_TRUE(waitForMembers(*P, 2));
  ASSERT_TRUE(bothMembersRun(*P));
  ASSERT_EQ(messageOf(P->stopTrace()), "");
  auto T = readTrace(Path);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  EXPECT_EQ(launchesByMember(*T), (std::map<int, size_t>{{0, 1}, {1, 1}}));
  auto Opens = T->named("open ");
  ASSERT_EQ(Opens.size(), 1u) << "the member that joined";
  EXPECT_EQ(Opens[0]->textArg("address"), Execs[1]->address());
  EXPECT_EQ(T->named("link member.o").size(), 1u) << "sent on joining";
}

// A second trace, a path that cannot be written (or none), or a member
// that already traces (through forEachMember) is refused, saying so; a
// refused start leaves no member traced.
TEST_F(PoolTest, APoolTraceThatCannotStartIsRefusedSayingWhy) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  TempDir Dir;
  std::string Bad = Dir.path("no-such-folder/pool.json");
  FailureReport R = reportFailure(P->startTrace(Bad));
  EXPECT_EQ(R.Kind, FailureKind::BadArgument);
  std::string Msg = R.Message;
  EXPECT_TRUE(mentions(Msg, P->address().str() + ": cannot start tracing")) << Msg;
  EXPECT_TRUE(mentions(Msg, "cannot write trace file '" + Bad + "': No such file")) << Msg;
  Msg = messageOf(P->startTrace(""));
  EXPECT_TRUE(mentions(Msg, "cannot start tracing to '': the path is empty")) << Msg;
  std::string Path = Dir.path("pool.json");
  ASSERT_EQ(messageOf(P->startTrace(Path)), "");
  Msg = messageOf(P->startTrace(Dir.path("other.json")));
  EXPECT_TRUE(mentions(Msg, "a trace to '" + Path + "' is on already")) << Msg;
  ASSERT_EQ(messageOf(P->stopTrace()), "");

  std::string Own = Dir.path("own.json"), Again = Dir.path("again.json");
  auto OnFirst = [&](llvm::function_ref<llvm::Error(Session &)> F) {
    P->forEachMember([&](llvm::StringRef, llvm::StringRef Address, Session &S) {
      if (Address == Execs[0]->address()) {
        EXPECT_EQ(messageOf(F(S)), "");
      }
    });
  };
  OnFirst([&](Session &S) { return S.startTrace(Own); });
  Msg = messageOf(P->startTrace(Again));
  EXPECT_TRUE(mentions(Msg, "member " + Execs[0]->address() + ": cannot start tracing")) << Msg;
  EXPECT_TRUE(mentions(Msg, "a trace to '" + Own + "' is on already")) << Msg;
  for (int64_t Tag = 0; Tag < 4; ++Tag) {
    Whose W(0, Tag);
    ASSERT_EQ(messageOf(P->launch(W.call())), "");
  }
  auto T = readTrace(Again);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  EXPECT_EQ(launchesByMember(*T), (std::map<int, size_t>{})) << "the other member was stopped";
  auto Mine = readTrace(Own);
  ASSERT_TRUE(bool(Mine)) << llvm::toString(Mine.takeError());
  EXPECT_EQ(launchesByMember(*Mine), (std::map<int, size_t>{{0, 2}})) << "left as it was";
  OnFirst([](Session &S) { return S.stopTrace(); });
  EXPECT_EQ(messageOf(P->startTrace(Again)), "");
}

TEST_F(PoolTest, OpenWaitsForTheMinimumAndSaysWhoDidNotJoin) {
  start(1);
  std::string Dead = "127.0.0.1:1";
  PoolOptions O = options(2);
  O.Member.HandshakeTimeout = 500ms;
  auto Start = Clock::now();
  auto P = Pool::open(listAddress() + "," + Dead, O);
  ASSERT_FALSE(P);
  auto [Kind, Msg] = reportFailure(P.takeError());
  EXPECT_EQ(Kind, FailureKind::Timeout) << Msg;
  EXPECT_GE(Clock::now() - Start, 500ms);
  EXPECT_TRUE(mentions(Msg, "1 of the 2 members needed joined within 500 ms")) << Msg;
  EXPECT_TRUE(mentions(Msg, Dead + ": ")) << Msg;
  O.MinMembers = 1;
  auto One = Pool::open(listAddress() + "," + Dead, O);
  ASSERT_TRUE(bool(One)) << llvm::toString(One.takeError());
  EXPECT_EQ((*One)->members(), 1u);
  auto R = reports();
  ASSERT_FALSE(R.empty());
  EXPECT_TRUE(mentions(R[0], "member " + Dead + " cannot join")) << R[0];
}

// An idle member whose executor dies is dropped, reported once (not again
// each time its address fails to join), and the others carry on.
TEST_F(PoolTest, AnIdleMemberThatDiesIsDroppedAndReportedOnce) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  std::string Dead = Execs[1]->address();
  std::vector<pid_t> Connections = Execs[1]->connectionPids();
  ::kill(Execs[1]->pid(), SIGKILL);
  for (pid_t C : Connections)
    ::kill(C, SIGKILL);
  ASSERT_TRUE(waitForMembers(*P, 1));
  // Its port, now a place where nothing serves: the pool tries it again.
  auto Port = uint16_t(std::stoi(Dead.substr(Dead.rfind(':') + 1)));
  ConnectionCounter Gone(Port);
  ASSERT_TRUE(Gone.waitFor(3, paced(20s))) << "joins tried again: " << Gone.accepted().size();
  auto R = reports();
  ASSERT_EQ(R.size(), 1u) << R.back();
  EXPECT_TRUE(mentions(R[0], Dead + " dropped")) << R[0];
  Whose W(0, 1);
  EXPECT_EQ(messageOf(P->launch(W.call())), "");
}

// A file an executor killed outright left behind points at an address
// where nothing serves: the pool reports it once and tries it again less
// and less often, not every poll.
TEST_F(PoolTest, AStaleAnnouncementIsTriedLessAndLessOften) {
  TempDir Dir;
  start(1, {"--announce", Dir.dir()});
  ConnectionCounter Stale;
  std::ofstream(Dir.path("4711.0.1.addr")) << Stale.address() << "\n";
  auto P = open("pool:" + Dir.dir(), options(1)); // polls every 50 ms
  ASSERT_TRUE(P);
  ASSERT_TRUE(Stale.waitFor(4, paced(20s))) << "tried again: " << Stale.accepted().size();
  // Each try comes after the wait the last failure set, 50 ms doubled
  // with each failure: at least 200 ms before the fourth. A pool that
  // tried at every poll would try again within about 50 ms; a loaded
  // machine only makes the gap longer.
  auto Tries = Stale.accepted();
  EXPECT_GE(Tries[3] - Tries[2], 200ms);
  EXPECT_GE(Tries[2] - Tries[1], 100ms);
  EXPECT_EQ(P->members(), 1u);
  auto R = reports();
  ASSERT_EQ(R.size(), 1u) << "reported once";
  EXPECT_TRUE(mentions(R[0], "4711.0.1 (" + Stale.address() + ") cannot join")) << R[0];
}

TEST_F(PoolTest, BadPoolAddressesAreRefusedSayingWhy) {
  auto Expect = [](const std::string &Address, const std::string &Says) {
    auto P = Pool::open(Address);
    ASSERT_FALSE(P) << Address;
    auto [Kind, Msg] = reportFailure(P.takeError());
    EXPECT_EQ(Kind, FailureKind::BadArgument) << Address << ": " << Msg;
    EXPECT_TRUE(mentions(Msg, Says)) << Address << ": " << Msg;
  };
  Expect("pool:", "empty pool address");
  Expect("pool:127.0.0.1:1,,127.0.0.1:2", "entry 2 is empty");
  Expect("pool:127.0.0.1:1,127.0.0.1:1", "names 127.0.0.1:1 twice");
  Expect("127.0.0.1:1", "is not a pool address");
}

// A file that one member cannot link fails the call, naming it; the pool
// goes on, and members that join later are not sent it again.
TEST_F(PoolTest, AnObjectThatFailsToLinkNamesTheMembers) {
  auto P = openList(2);
  ASSERT_TRUE(P);
  std::string Msg = messageOf(P->sendBinary(kernelObject("missing_symbol"), BinaryFormat::Object));
  EXPECT_TRUE(mentions(Msg, "failed on 2 of 2 members")) << Msg;
  EXPECT_TRUE(mentions(Msg, Execs[0]->address())) << Msg;
  Whose W(0, 1);
  EXPECT_EQ(messageOf(P->launch(W.call())), "");
}

} // namespace
