//===- PoolTracing.cpp - The pool's trace, on every member ----------------===//
//
// The pool's trace is one path every member's session traces to, each
// member on tracks of its own (its executor's connection process, and the
// host thread that runs its share of asynchronous launches). Starting and
// stopping it sets every member's session; a member that joins meanwhile
// opens its session with the path the pool traces to then, and is set
// again, before the pool takes it, if that changed while it was opening.
//
//===----------------------------------------------------------------------===//

#include "../trace/TraceFile.h"
#include "PoolImpl.h"
#include "catalyst/remote/Failure.h"

#include <optional>

using namespace llvm;

namespace catalyst::remote {

namespace {

// Failures say their kind (Failure.h), which bindings raise by.
Error traceError(const Twine &Message, FailureKind Kind = FailureKind::Other) {
  return makeFailure(Kind, Message);
}

// Makes Mem's session trace to Path, or not at all (""). A trace the pool
// did not start on it (Pool::forEachMember's caller's) is left alone, and
// fails a start.
Error follow(pool::Member &Mem, const std::string &Path) {
  if (Mem.Follows == Path)
    return Error::success();
  if (!Mem.Follows.empty()) {
    if (Error Err = Mem.S->stopTrace())
      return Err;
    Mem.Follows.clear();
  }
  if (Path.empty())
    return Error::success();
  if (Error Err = Mem.S->startTrace(Path))
    return Err;
  Mem.Follows = Path;
  return Error::success();
}

} // namespace

// Under M: the members whose sessions are open, each counted as used
// (release() it); with Dropped, those dropped and not yet released too,
// whose sessions may still be writing.
std::vector<MemberPtr> Pool::Impl::holdSessions(bool Dropped) {
  std::vector<MemberPtr> All = Members;
  if (Dropped)
    for (const MemberPtr &Mem : Former)
      if (!Mem->Released)
        All.push_back(Mem);
  for (const MemberPtr &Mem : All)
    hold(*Mem);
  return All;
}

// Under TraceMutex. Sets every one of All (held; released here) to follow
// Path, at once: each waits for its member's launch in flight. A member
// whose connection ended fails nothing: the session that replaces it
// follows the pool's trace as it joins.
Error Pool::Impl::followTraces(ArrayRef<MemberPtr> All, const std::string &Path) {
  std::vector<std::optional<std::string>> Failures(All.size());
  atOnce(All.size(), [&](size_t I) {
    if (Error Err = follow(*All[I], Path))
      Failures[I] = toString(std::move(Err));
  });
  std::string Failed;
  for (size_t I = 0; I < All.size(); ++I) {
    if (Failures[I] && All[I]->S->connected())
      Failed += (Failed.empty() ? "member " : "; member ") + All[I]->label() + ": " + *Failures[I];
    release(All[I]);
  }
  return Failed.empty() ? Error::success() : traceError(Failed);
}

// The file is opened here, once, so that a path no member could write is
// refused even when the pool has no member now, rather than failing
// members as they join.
Error Pool::Impl::startTrace(StringRef Path) {
  sync::MutexLock Turn(TraceMutex);
  std::string Head = Address + ": cannot start tracing to '" + Path.str() + "': ";
  {
    sync::MutexLock L(M);
    if (Path.empty())
      return traceError(Head + "the path is empty", FailureKind::BadArgument);
    if (Closing)
      return traceError(Head + "the pool is closed", FailureKind::Closed);
    if (!TracePath.empty())
      return traceError(Head + "a trace to '" + TracePath +
                        "' is on already (stopTrace ends it; a pool whose "
                        "PoolOptions::Member.TracePath or CATALYST_REMOTE_TRACE is set traces "
                        "from its start)");
  }
  auto File = TraceFile::get(Path);
  if (!File)
    return traceError(Head + toString(File.takeError()), FailureKind::BadArgument);
  std::vector<MemberPtr> All;
  {
    sync::MutexLock L(M);
    TracePath = Path.str();
    All = holdSessions(/*Dropped=*/false);
  }
  Error Err = followTraces(All, Path.str());
  if (!Err)
    return Error::success();
  // All or nothing: the caller, told it failed, will not stop it.
  consumeError(stopTrace(Turn));
  return traceError(Head + toString(std::move(Err)));
}

Error Pool::Impl::stopTrace() {
  sync::MutexLock Turn(TraceMutex);
  return stopTrace(Turn);
}

Error Pool::Impl::stopTrace(const sync::MutexLock &Turn) {
  std::vector<MemberPtr> All;
  {
    sync::MutexLock L(M);
    TracePath.clear();
    All = holdSessions(/*Dropped=*/true);
  }
  return followTraces(All, "");
}

// M, locked at a moment every one of Fresh (not among Members yet, so only
// this thread sets their traces) follows the pool's trace: what a member
// must do before it is taken. Why one could not goes to Reports.
void Pool::Impl::lockFollowing(ArrayRef<MemberPtr> Fresh, std::vector<std::string> &Reports) {
  std::vector<std::string> Tried;
  for (const MemberPtr &Mem : Fresh)
    Tried.push_back(Mem ? Mem->Follows : "");
  M.lock();
  for (;;) {
    std::string Want = TracePath;
    std::vector<size_t> Behind;
    for (size_t I = 0; I < Fresh.size(); ++I)
      if (Fresh[I] && Tried[I] != Want)
        Behind.push_back(I);
    if (Behind.empty())
      return;
    M.unlock();
    for (size_t I : Behind) {
      if (Error Err = follow(*Fresh[I], Want))
        Reports.push_back(Address + ": member " + Fresh[I]->label() +
                          " is not traced: " + toString(std::move(Err)));
      Tried[I] = Want;
    }
    M.lock();
  }
}

} // namespace catalyst::remote
