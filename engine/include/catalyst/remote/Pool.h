//===- Pool.h - Many executors reached by one address -----------*- C++ -*-===//
//
// A pool is a set of executors, its members, used as one: launches go to
// the least-loaded member, objects and assets reach every member, and
// members come and go as the executors announce themselves and stop. The
// members are found through a pool address:
//
//   pool:DIR            files executors wrote there (--announce DIR), a
//                       directory the host shares with them;
//   pool:pmix           the executors of this process's own PMIx job
//                       (--announce pmix; mpirun's MPMD form, a
//                       heterogeneous Slurm job);
//   pool:ADDR,ADDR,...  executors started by other means.
//
//   PoolOptions O;                       // O.Member: each member's session
//   auto P = Pool::open("pool:/shared/job42", O);
//   (*P)->sendBinary("kernel.o", BinaryFormat::Object);
//   (*P)->launch(Call);                  // on one member
//   uint64_t T = (*P)->launchAsync(Call) // queued; handed to an idle member
//   (*P)->await(T);
//
// Placement. A blocking launch runs on the calling thread, on the member
// with the fewest launches running (of those, the one that ran the fewest
// so far). Asynchronous launches wait in one queue; as soon as a member
// is idle, the pool hands it the first, choosing among idle members as
// above, so a slow member takes fewer, idle members take turns, and a
// member that joins late takes its share; each await returns its own
// launch's result, whichever member ran it. A member runs one launch at a
// time (its session's launches take turns), so a pool gains concurrency
// where launches overlap: several threads, or asynchronous launches.
//
// Membership. The pool reads its source every PollInterval. A member that
// appears joins once its session opens; before its first launch it is
// sent every object and asset sent to the pool so far, in order. A member
// whose announcement goes (its executor is stopping), whose executor
// stops answering (the session's liveness), or whose connection ends is
// dropped and reported once (PoolOptions::Report). A member whose
// connection ended but whose executor still takes sessions (a kernel
// killed its connection process) is joined again with a new session.
//
// Losing a member mid-launch. A launch whose member was lost (its executor
// no longer takes sessions) fails naming the member, or, with
// RetryOnMemberLoss, runs again on another member, at most once on each.
// A launch that fails while its executor lives (a kernel that crashed, a
// bad argument) fails as on a session: running it elsewhere would fail
// again, or crash that member too.
//
// Residents (Resident.h). upload() puts a copy of a tensor on every member
// and keeps a dense copy on the host until release(), from which each
// member that joins later, or joins again with a new session, gets it
// before its first launch: an upload costs its bytes in host memory for as
// long as it lives. A launch that names only uploads runs on any member,
// and runs again elsewhere after a loss as any launch does. An output a
// launch keeps (LaunchCall::Keep) lives only on the member that made it:
// a launch that names it runs on that member, in its turn there, and is
// never run elsewhere. When that member is
// lost, a launch or fetch that names the output fails as ExecutorLost,
// naming the member, RetryOnMemberLoss or not; release() still forgets it.
// Handles are the pool's own: a member session's, or another pool's, are
// refused.
//
// Errors carry a kind (Failure.h), as a session's do, the member's own
// kept where one member's error is passed on: a launch whose member was
// lost is ExecutorLost, a call on a closed pool Closed, and a pool that
// does not reach its members in time (PoolOptions::MinMembers, or no
// member to run on) Timeout.
//
// Thread safety: every method may be called from any thread, close()
// included, as on a Session.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_POOL_H
#define CATALYST_REMOTE_POOL_H

#include "catalyst/remote/Launch.h"
#include "catalyst/remote/Resident.h"
#include "catalyst/remote/Session.h"
#include "catalyst/remote/SessionOptions.h"
#include "catalyst/remote/Stats.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace catalyst::remote {

struct PoolOptions {
  // How each member's session is set up. Its HandshakeTimeout also bounds
  // how long open() waits for MinMembers, and how long a launch waits for
  // a member when the pool has none.
  SessionOptions Member;
  // open() fails unless this many members joined within the handshake
  // timeout (CATALYST_REMOTE_POOL_MIN through the C ABI).
  size_t MinMembers = 1;
  // Run a launch again on another member when its member is lost while it
  // runs (CATALYST_REMOTE_POOL_RETRY=1 through the C ABI). Off by default:
  // a kernel may drive hardware, and may have done so before the loss.
  bool RetryOnMemberLoss = false;
  // How often the pool reads its source for members that appeared or went.
  std::chrono::milliseconds PollInterval{250};
  // Told of each member dropped or that cannot join, once per member and
  // address, with a line naming it and saying why. Empty: standard error.
  // Called from the pool's threads, never under its locks.
  std::function<void(llvm::StringRef)> Report;
};

// One member as stats() shows it.
struct PoolMemberStats {
  std::string Name;    // the announcement: a file's name, a rank, an address
  std::string Address; // what the pool dialed
  bool Healthy = true; // false once dropped
  std::string Dropped; // why it was dropped; empty while healthy
  uint64_t Running = 0;
  remote::Strategy Strategy = Strategy::Auto; // its launches'; Auto once dropped
  SessionStats Session;                       // of its current session
};

struct PoolStats {
  uint64_t Launches = 0;                // finished on any member, failed ones included
  uint64_t Retried = 0;                 // launches run again after losing their member
  uint64_t MembersLost = 0;             // dropped since the pool opened
  LaunchStats Last;                     // the last launch to finish, whichever member ran it
  LaunchStats Total;                    // summed over every member's sessions
  std::vector<PoolMemberStats> Members; // healthy ones first, in joining order
};

// The result of callWrapper on one member, from callWrapperOnAll.
struct MemberReply {
  std::string Name, Address;
  llvm::Expected<std::vector<char>> Reply;
};

class Pool {
public:
  // True for "pool:..." addresses.
  static bool isPoolAddress(llvm::StringRef Address);

  // Opens a pool: Address is "pool:DIR", "pool:pmix" or "pool:ADDR,..."
  // (MemberSource.h). Waits up to the handshake timeout for MinMembers
  // members; fails saying how many joined and why others did not.
  static llvm::Expected<std::unique_ptr<Pool>> open(llvm::StringRef Address,
                                                    const PoolOptions &Options = {});
  ~Pool();

  llvm::StringRef address() const;
  // Healthy members now.
  size_t members() const;
  // True until closed.
  bool connected() const;

  // Ships a file to every member now, and to every member that joins
  // later before its first launch. A member that fails to link it while
  // its executor lives fails the call, naming the member; one lost meanwhile
  // is dropped.
  llvm::Error sendBinary(llvm::StringRef Path, BinaryFormat Format);

  // Runs on one member: the one that joined first of those healthy, so
  // that stateful wrappers keep meeting the same executor.
  llvm::Expected<std::vector<char>> callWrapper(llvm::StringRef Symbol, llvm::ArrayRef<char> Args);
  // Runs on every healthy member, at once; one reply each.
  std::vector<MemberReply> callWrapperOnAll(llvm::StringRef Symbol, llvm::ArrayRef<char> Args);

  // Runs F on every healthy member's session at once, each on a thread of
  // its own, and returns once all have: for what the pool does not do
  // itself, such as timing each member's round trip. F must not close the
  // session.
  void forEachMember(
      llvm::function_ref<void(llvm::StringRef Name, llvm::StringRef Address, Session &S)> F);

  // Copies the tensor In describes to every healthy member, and keeps a
  // dense copy on the host for members joining later (Residents above).
  // Fails, keeping nothing anywhere, when a member that lives refuses it
  // (naming the member), or as a session's upload fails for a bad
  // descriptor.
  llvm::Expected<Resident> upload(const MemrefArg &In);
  // As Session::fetch, from a member that holds R: for a kept output its
  // member, ExecutorLost when that member was lost.
  llvm::Error fetch(const Resident &R, const MemrefArg &Out, llvm::MutableArrayRef<char> Into = {});
  // Frees R on every member that holds it and on the host, and empties R.
  // A member lost meanwhile freed its copy with its connection. Fails as
  // BadArgument, freeing nothing, for a handle this pool did not make or
  // has released already.
  llvm::Error release(Resident &R);

  // As on a Session; see Placement, Residents and Losing a member above.
  llvm::Error launch(const LaunchCall &Call);
  uint64_t launchAsync(const LaunchCall &Call);
  llvm::Error await(uint64_t Ticket);

  PoolStats stats() const;

  // Traces every member's session to Path, as Session::startTrace does,
  // each member on tracks of its own; a member that joins (or rejoins)
  // while the trace is on is traced from its session's opening. Waits for
  // each member's launch in flight, which is left out. The path is opened
  // here, so that one that cannot be written fails this call, naming it and
  // why, rather than members as they join. Fails too when the pool is
  // closed, and when a trace is on already (PoolOptions::Member.TracePath
  // starts one with the pool): stopTrace first. All or nothing: a member
  // that cannot trace (one traced through forEachMember) fails the call,
  // naming it, and no member is left traced by it.
  llvm::Error startTrace(llvm::StringRef Path);
  // Ends the pool's trace, whoever began it, on every member, dropped ones
  // whose sessions are still open included, and on members joining; returns
  // once none writes to it any more (Session::stopTrace). Nothing to do
  // when no trace is on; succeeds.
  llvm::Error stopTrace();

  // Waits for queued launches, stops reading the source and closes every
  // member's session. Idempotent.
  llvm::Error close();

  class Impl;

private:
  explicit Pool(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> I;
};

// Opts with what the environment sets for pools: CATALYST_REMOTE_POOL_MIN
// (a count, at least 1) and CATALYST_REMOTE_POOL_RETRY ("1" or "0");
// the members' options come from optionsFromEnvironment. Fails on a value
// it cannot use, saying which.
llvm::Expected<PoolOptions> poolOptionsFromEnvironment(PoolOptions Opts = {});

} // namespace catalyst::remote

#endif
