//===- PoolImpl.h - What a Pool holds and how its parts meet ----*- C++ -*-===//
//
// Pool.cpp opens and closes a pool and answers the calls that touch every
// member; PoolMembership.cpp follows the source (joins, drops, reports);
// PoolLaunches.cpp places launches, runs the asynchronous ones and decides
// what a failed launch means; PoolResidents.cpp keeps the pool's residents
// and names them to the member a launch runs on; PoolTracing.cpp starts and stops the pool's
// trace on every member, joining ones included.
//
// Threads: the callers' (any of Pool's methods); the watcher, started by
// open(), which reads the source every PollInterval, joins and drops
// members and closes the sessions of dropped ones once unused; one worker
// per member once an asynchronous launch was made, which runs the launches
// dispatch() hands its member; and short-lived threads that do one call on
// every member at once.
//
// Locking: M guards every member below declared GUARDED_BY(M) (Clang
// checks it: tools/thread-safety-check), and the members' fields Member.h
// says are the pool's. Nothing waits for the network while holding M:
// sessions are opened, used and closed outside it. (refresh() asks a
// member's Session::connected() under M, which takes that session's Life
// shared and would wait out a close() of it; no member in Members is being
// closed, so it never waits.) Report is called outside it. TraceMutex
// makes starts and stops of the pool's trace take turns; it is taken
// before M, never under it, and held while the
// members' traces start (reading their executors' clocks) or stop.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_ENGINE_POOL_POOLIMPL_H
#define CATALYST_REMOTE_ENGINE_POOL_POOLIMPL_H

#include "Member.h"
#include "MemberSource.h"
#include "catalyst/remote/Pool.h"
#include "sync/Mutex.h"
#include "wire/Residents.h"

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace catalyst::remote {

using MemberPtr = std::shared_ptr<pool::Member>;
using Clock = std::chrono::steady_clock;

// A file sent to the pool, which every member gets before its first launch.
struct PoolBinary {
  std::string Path;
  BinaryFormat Format;
  bool Failed = false; // some member refused it: later ones skip it
};

// An upload's bytes on the host, dense and row-major, and a descriptor over
// them: what a member that joins later is sent.
struct HostTensor {
  std::unique_ptr<char[]> Bytes;
  std::vector<int64_t> Desc;
  wire::TensorShape Shape;

  MemrefArg arg() const {
    return {const_cast<int64_t *>(Desc.data()), Shape.Sizes.size(), Shape.ElemSize};
  }
};

// A resident of the pool: an upload, which every member gets, or an output
// a launch kept, which lives on the member that made it.
struct PoolResident {
  wire::TensorShape Shape;
  // An upload's copy; null for a kept output. Shared: a member catching up
  // sends it outside the pool's mutex while release() may drop the record.
  std::shared_ptr<const HostTensor> Copy;
  // A kept output's member: its Order, and its label for errors.
  uint64_t Home = 0;
  std::string HomeLabel;
};

// Where a launch must run: on the member that holds a kept output it
// names (Home), or anywhere.
struct Placement {
  std::optional<uint64_t> Home;
  std::string HomeLabel;
};

// A pool launch as one member runs it: the pool's residents named by the
// member's session's own handles, and its session's handles for the
// outputs it keeps. Moving it keeps Call's pointers valid.
struct MemberCall {
  std::vector<MemrefArg> Inputs;
  std::vector<Resident> Named; // the member's handles Inputs point at
  std::vector<Resident> Kept;  // one per output
  std::vector<Resident *> Keep;
  LaunchCall Call;
};

// What the members that refused a call made on many of them said: how
// many, the first one's kind, and "; member NAME: why" for each.
struct MemberRefusals {
  size_t Count = 0;
  FailureKind Kind = FailureKind::Other;
  std::string Text;

  // "N of TOTAL members; member NAME: why...".
  std::string of(size_t Total) const {
    return std::to_string(Count) + " of " + std::to_string(Total) + " members" + Text;
  }
};

// Runs F(0) .. F(N-1) at once: one on the calling thread, the others on
// threads of their own. Members are few, and each call waits on the
// network, so a thread each is what lets them overlap.
template <typename Fn> void atOnce(size_t N, Fn F) {
  std::vector<std::thread> Threads;
  for (size_t I = 1; I < N; ++I)
    Threads.emplace_back(F, I);
  if (N)
    F(0);
  for (std::thread &T : Threads)
    T.join();
}

// An asynchronous launch: the caller's call, copied, and where it was tried.
struct PoolJob {
  uint64_t Ticket = 0;
  std::string Entry, Object;
  std::vector<MemrefArg> Inputs, Outputs;
  std::vector<llvm::MutableArrayRef<char>> Into;
  std::vector<Resident *> Keep;
  Placement Place;
  std::vector<uint64_t> Tried; // Orders of the members lost while running it
  Clock::time_point Since;     // queued, or queued again
  std::optional<uint64_t> For; // the Order of the member it was handed to

  LaunchCall call() const { return {Entry, Object, Inputs, Outputs, Into, Keep}; }
};

class Pool::Impl {
public:
  Impl(std::string Address, std::unique_ptr<pool::MemberSource> Source, PoolOptions Opts);

  // Pool.cpp
  llvm::Error start();
  llvm::Error sendBinary(llvm::StringRef Path, BinaryFormat Format);
  llvm::Expected<std::vector<char>> callWrapper(llvm::StringRef Symbol, llvm::ArrayRef<char> Args);
  std::vector<MemberReply> callWrapperOnAll(llvm::StringRef Symbol, llvm::ArrayRef<char> Args);
  // Runs Call(I) for each member All[I] at once (atOnce) and returns the
  // refusals among their failures. Members whose connection ended did not
  // refuse; they are joined again, or dropped.
  MemberRefusals onEach(llvm::ArrayRef<MemberPtr> All,
                        llvm::function_ref<llvm::Error(size_t)> Call);
  void forEachMember(
      llvm::function_ref<void(llvm::StringRef Name, llvm::StringRef Address, Session &S)> F);
  PoolStats stats() const;
  llvm::Error close();

  // PoolMembership.cpp
  void refresh();
  void watch();
  MemberPtr join(const pool::Announced &A, std::string &Why);
  bool drop(const MemberPtr &Mem, const std::string &Why);
  bool rejoin(const MemberPtr &Mem);
  bool noteJoinFailure(const std::string &Who, const std::string &Why) REQUIRES(M);
  void releaseUnused();
  void report(const std::string &Line);
  bool replace(const MemberPtr &Mem, const MemberPtr &Fresh, const std::string &Why,
               std::vector<std::string> &Reports);

  // PoolLaunches.cpp
  MemberPtr best(llvm::ArrayRef<uint64_t> Tried, bool Oldest, bool IdleOnly,
                 std::optional<uint64_t> Only = std::nullopt) const REQUIRES(M);
  llvm::Expected<MemberPtr> pick(llvm::ArrayRef<uint64_t> Tried, bool Oldest = false,
                                 const Placement &Place = {});
  // Counts a call placed on Mem (hold() and Running); release() ends it.
  static void hold(pool::Member &Mem);
  static void release(const MemberPtr &Mem);
  llvm::Error catchUp(pool::Member &Mem);
  bool caughtUp(const MemberPtr &Mem);
  llvm::Error runOn(const MemberPtr &Mem, const LaunchCall &Call);
  llvm::Error afterFailure(const MemberPtr &Mem, llvm::Error Err, llvm::StringRef Entry,
                           const Placement &Place, bool &Retry);
  llvm::Error launch(const LaunchCall &Call);
  uint64_t launchAsync(const LaunchCall &Call);
  llvm::Error await(uint64_t Ticket);
  void startWorker(const MemberPtr &Mem) REQUIRES(M);
  void dispatch() REQUIRES(M);
  void work(MemberPtr Mem);
  void failStranded();

  // PoolResidents.cpp
  llvm::Expected<Resident> upload(const MemrefArg &In);
  llvm::Error fetch(const Resident &R, const MemrefArg &Out, llvm::MutableArrayRef<char> Into);
  llvm::Error releaseResident(Resident &R);
  llvm::Expected<Placement> placement(const LaunchCall &Call);
  llvm::Error lostHome(const Placement &Place) const REQUIRES(M);
  llvm::Error catchUpResidents(pool::Member &Mem);
  llvm::Expected<MemberCall> onMember(const LaunchCall &Call, const MemberPtr &Mem);
  void adoptKept(const LaunchCall &Call, MemberCall &Ran, const MemberPtr &Mem);

  // Pool.cpp: counts a use of every healthy member; each must be released.
  std::vector<MemberPtr> useAll() EXCLUDES(M);

  // PoolTracing.cpp
  llvm::Error startTrace(llvm::StringRef Path);
  llvm::Error stopTrace();
  llvm::Error stopTrace(const sync::MutexLock &TraceTurn);
  std::vector<MemberPtr> holdSessions(bool Dropped) REQUIRES(M);
  llvm::Error followTraces(llvm::ArrayRef<MemberPtr> All, const std::string &Path);
  // Returns holding M: the caller adopts it (sync::UniqueLock(M, std::adopt_lock)).
  void lockFollowing(llvm::ArrayRef<MemberPtr> Fresh, std::vector<std::string> &Reports) ACQUIRE(M);

  const std::string Address;
  const PoolOptions Opts;

private:
  friend class Pool;
  std::unique_ptr<pool::MemberSource> Source; // the watcher's (start()'s before it runs)

  mutable sync::Mutex M;
  // Members, results or Closing changed: what pick(), await() and close()
  // wait for. Workers wait on their member's Wake, which dispatch() uses to
  // hand one a launch; membership and Closing wake them all.
  sync::CondVar Changed;
  void wakeAll() REQUIRES(M) {
    Changed.notify_all();
    for (const auto *List : {&Members, &Former})
      for (const MemberPtr &Mem : *List)
        Mem->Wake.notify_all();
  }

  std::vector<MemberPtr> Members GUARDED_BY(M); // healthy, in joining order
  std::vector<MemberPtr> Former GUARDED_BY(M);  // dropped, newest last
  uint64_t NextOrder GUARDED_BY(M) = 0;
  // Announcements that failed to join, by "name (address)": reported
  // once, and tried again after a wait that doubles with each failure up
  // to MaxJoinBackoff, so that a file a killed executor left behind costs
  // a connection attempt now and then, not every poll. Under M.
  struct JoinFailure {
    std::string Why;
    unsigned Count = 0;
    Clock::time_point NextTry;
  };
  std::map<std::string, JoinFailure> JoinFailures GUARDED_BY(M);
  std::string SourceFailure GUARDED_BY(M); // the last poll's error, reported once

  std::vector<PoolBinary> Binaries GUARDED_BY(M);
  std::atomic<size_t> BinaryCount{0};

  // Residents: the pool's, by the id its handles carry (ResidentOwner's).
  // UploadsMade counts uploads ever recorded, so that a member that saw as
  // many (Member::UploadsSeen) needs no look for missing ones.
  const uint64_t ResidentOwner;
  std::map<uint64_t, PoolResident> Residents GUARDED_BY(M);
  uint64_t NextResident GUARDED_BY(M) = 1;
  std::atomic<uint64_t> UploadsMade{0};

  // Asynchronous launches.
  bool AsyncStarted GUARDED_BY(M) = false;
  std::deque<PoolJob> Queue GUARDED_BY(M);
  std::map<uint64_t, llvm::Error> Finished GUARDED_BY(M);
  std::set<uint64_t> Pending GUARDED_BY(M); // queued or running
  uint64_t NextTicket GUARDED_BY(M) = 1;

  // Counters.
  uint64_t Launches GUARDED_BY(M) = 0;
  uint64_t Retried GUARDED_BY(M) = 0;
  uint64_t MembersLost GUARDED_BY(M) = 0;
  // Whose session ran the launch that finished last without failing:
  // stats() reports that session's Last as the pool's.
  MemberPtr LastMember GUARDED_BY(M);

  // The pool's trace: the path every member traces to, empty for none;
  // written holding TraceMutex and M, read under either.
  sync::Mutex TraceMutex;
  std::string TracePath;

  bool Closing GUARDED_BY(M) = false;
  std::thread Watcher;
};

} // namespace catalyst::remote

#endif
