//===- PoolMembership.cpp - Members join and go as announced --------------===//

#include "PoolImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace catalyst::remote {

namespace {

bool same(const pool::Member &Mem, const pool::Announced &A) {
  return Mem.Name == A.Name && Mem.Address == A.Address;
}

std::string key(const pool::Announced &A) {
  return A.Name == A.Address ? A.Address : A.Name + " (" + A.Address + ")";
}

// Dropped members kept for stats() once their sessions are released.
constexpr size_t FormerKept = 64;

// The longest an announcement that failed to join waits to be tried again.
constexpr std::chrono::seconds MaxJoinBackoff{10};

} // namespace

void Pool::Impl::report(const std::string &Line) {
  if (Opts.Report)
    Opts.Report(Line);
  else
    errs() << "catalyst-remote: " << Line << "\n";
}

// Under M. True for the first failure since the announcement last joined.
bool Pool::Impl::noteJoinFailure(const std::string &Who, const std::string &Why) {
  JoinFailure &F = JoinFailures[Who];
  F.Why = Why;
  auto Wait = Opts.PollInterval * (1u << std::min(F.Count, 8u));
  F.NextTry = Clock::now() + std::min<Clock::duration>(Wait, MaxJoinBackoff);
  return F.Count++ == 0;
}

// Traced from its opening when the pool traces now; lockFollowing() sets
// it again if that changes before the pool takes it.
MemberPtr Pool::Impl::join(const pool::Announced &A, std::string &Why) {
  SessionOptions O = Opts.Member;
  {
    sync::MutexLock L(M);
    O.TracePath = TracePath;
  }
  auto S = Session::open(A.Address, O);
  if (!S) {
    Why = toString(S.takeError());
    return nullptr;
  }
  sync::MutexLock L(M);
  auto Mem = std::make_shared<pool::Member>(A.Name, A.Address, std::move(*S), NextOrder++);
  Mem->Follows = O.TracePath;
  return Mem;
}

// Reads the source once: drops members whose announcement went or whose
// connection ended, and joins those announced anew, all at once.
void Pool::Impl::refresh() {
  auto Now = Source->poll();
  if (!Now) {
    std::string Msg = toString(Now.takeError());
    bool New;
    {
      sync::MutexLock L(M);
      New = Msg != SourceFailure;
      SourceFailure = Msg;
    }
    if (New)
      report(Address + ": cannot read its members: " + Msg);
    return;
  }
  std::vector<MemberPtr> Withdrawn, Ended;
  std::vector<pool::Announced> Fresh;
  {
    sync::MutexLock L(M);
    SourceFailure.clear();
    for (const MemberPtr &Mem : Members) {
      if (!llvm::any_of(*Now, [&](const pool::Announced &A) { return same(*Mem, A); }))
        Withdrawn.push_back(Mem);
      else if (!Mem->S->connected())
        Ended.push_back(Mem);
    }
    auto Time = Clock::now();
    for (const pool::Announced &A : *Now) {
      if (llvm::any_of(Members, [&](const MemberPtr &Mem) { return same(*Mem, A); }))
        continue;
      auto Failed = JoinFailures.find(key(A));
      if (Failed == JoinFailures.end() || Failed->second.NextTry <= Time)
        Fresh.push_back(A);
    }
  }
  for (const MemberPtr &Mem : Withdrawn)
    drop(Mem, "its announcement was withdrawn (its executor is stopping)");
  for (const MemberPtr &Mem : Ended)
    rejoin(Mem);
  std::vector<MemberPtr> Joined(Fresh.size());
  std::vector<std::string> Why(Fresh.size());
  std::vector<std::thread> Threads;
  for (size_t I = 0; I < Fresh.size(); ++I)
    Threads.emplace_back([&, I] { Joined[I] = join(Fresh[I], Why[I]); });
  for (std::thread &T : Threads)
    T.join();
  std::vector<std::string> Reports;
  std::vector<MemberPtr> Extra;
  {
    lockFollowing(Joined, Reports);
    sync::UniqueLock L(M, std::adopt_lock);
    for (size_t I = 0; I < Fresh.size(); ++I) {
      std::string Who = key(Fresh[I]);
      if (!Joined[I]) {
        JoinFailure &F = JoinFailures[Who];
        if (F.Count++ == 0)
          Reports.push_back(Address + ": member " + Who + " cannot join: " + Why[I]);
        F.Why = Why[I];
        F.NextTry = Clock::now() +
                    std::min<Clock::duration>(Opts.PollInterval * (1u << std::min(F.Count, 8u)),
                                              MaxJoinBackoff);
        continue;
      }
      JoinFailures.erase(Who);
      // A launch that saw it fail may have joined it meanwhile.
      if (llvm::any_of(Members, [&](const MemberPtr &Mem) { return same(*Mem, Fresh[I]); })) {
        Extra.push_back(std::move(Joined[I]));
        continue;
      }
      Members.push_back(Joined[I]);
      if (AsyncStarted)
        startWorker(Joined[I]);
    }
    wakeAll();
  }
  for (const std::string &R : Reports)
    report(R);
  for (const MemberPtr &Mem : Extra)
    consumeError(Mem->S->close()); // never used: closing it fails nothing
  failStranded();
  releaseUnused();
}

void Pool::Impl::watch() {
  sync::UniqueLock L(M);
  while (!Closing) {
    Changed.wait_for(L, Opts.PollInterval, [this]() REQUIRES(M) { return Closing; });
    if (Closing)
      break;
    L.unlock();
    refresh();
    L.lock();
  }
}

bool Pool::Impl::drop(const MemberPtr &Mem, const std::string &Why) {
  {
    sync::MutexLock L(M);
    if (Mem->Gone)
      return false;
    Mem->Gone = true;
    Mem->Dropped = Why;
    llvm::erase(Members, Mem);
    Former.push_back(Mem);
    ++MembersLost;
    wakeAll();
  }
  report(Address + ": member " + Mem->label() + " dropped: " + Why);
  return true;
}

// Mem's connection ended. When its executor still takes sessions (a
// kernel killed the connection process, a launch ran past its deadline),
// a new session replaces it and this returns true; otherwise the member
// is dropped as lost.
bool Pool::Impl::rejoin(const MemberPtr &Mem) {
  std::string Why;
  MemberPtr Fresh = join({Mem->Name, Mem->Address}, Why);
  std::vector<std::string> Reports;
  bool Replaced = replace(Mem, Fresh, Why, Reports);
  for (const std::string &R : Reports)
    report(R);
  return Replaced;
}

// Puts Fresh, Mem's new session (null when none opened, for Why), in Mem's
// place; else drops Mem. What is to be reported goes to Reports.
bool Pool::Impl::replace(const MemberPtr &Mem, const MemberPtr &Fresh, const std::string &Why,
                         std::vector<std::string> &Reports) {
  lockFollowing({Fresh}, Reports);
  sync::UniqueLock L(M, std::adopt_lock);
  if (Mem->Gone) {
    // Another thread saw the same end first and dealt with it.
    bool Replaced = llvm::any_of(Members, [&](const MemberPtr &Other) {
      return Other->Name == Mem->Name && Other->Address == Mem->Address;
    });
    L.unlock();
    if (Fresh)
      consumeError(Fresh->S->close()); // never used: closing it fails nothing
    return Replaced;
  }
  if (!Fresh) {
    // Its announcement may stay (a list, a file a killed executor left):
    // joining it again waits, and the drop below is its one report.
    noteJoinFailure(key({Mem->Name, Mem->Address}), Why);
    L.unlock();
    drop(Mem, "its connection ended and its executor takes no new session: " + Why);
    return false;
  }
  Mem->Gone = true;
  Mem->Dropped = "its connection ended; its executor took a new session";
  *llvm::find(Members, Mem) = Fresh;
  Former.push_back(Mem);
  if (AsyncStarted)
    startWorker(Fresh);
  wakeAll();
  return true;
}

// Closes the sessions of dropped members nobody uses any more, and keeps
// only the last FormerKept of them.
void Pool::Impl::releaseUnused() {
  std::vector<MemberPtr> Unused;
  {
    sync::MutexLock L(M);
    for (const MemberPtr &Mem : Former)
      if (!Mem->Released && Mem->Holds == 0)
        Unused.push_back(Mem);
  }
  for (const MemberPtr &Mem : Unused) {
    // Dropped: whatever its session says on closing was said already.
    consumeError(Mem->S->close());
    if (Mem->Worker.joinable() && Mem->WorkerDone)
      Mem->Worker.join();
  }
  sync::MutexLock L(M);
  for (const MemberPtr &Mem : Unused) {
    // Taken since it was picked (stats(), or stopping the pool's trace):
    // its session, closed, stays until a later pass finds it unused.
    if (Mem->Holds != 0)
      continue;
    Mem->Final = Mem->S->stats();
    Mem->Released = true;
    Mem->S.reset();
  }
  while (Former.size() > FormerKept && Former.front()->Released &&
         !Former.front()->Worker.joinable())
    Former.erase(Former.begin());
}

} // namespace catalyst::remote
