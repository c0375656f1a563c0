//===- PoolLaunches.cpp - Where a launch runs, and again after a loss -----===//

#include "PoolImpl.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>
#include <pthread.h>

using namespace llvm;

namespace catalyst::remote {

namespace {

// No member to run a launch on: none joined in time, or none is left
// besides those lost while running it.
FailureKind noMemberKind(ArrayRef<uint64_t> Tried) {
  return Tried.empty() ? FailureKind::Timeout : FailureKind::ExecutorLost;
}

// Fewest launches running, then fewest placed so far; or the oldest.
bool better(const pool::Member &A, const pool::Member &B, bool Oldest) {
  if (Oldest)
    return A.Order < B.Order;
  uint64_t RA = A.Running, RB = B.Running;
  if (RA != RB)
    return RA < RB;
  return A.Started < B.Started;
}

} // namespace

// The healthy member not in Tried that ranks best (better()), among the
// idle ones only with IdleOnly, and only the one of Order Only when given;
// null for none.
MemberPtr Pool::Impl::best(ArrayRef<uint64_t> Tried, bool Oldest, bool IdleOnly,
                           std::optional<uint64_t> Only) const {
  MemberPtr Best;
  for (const MemberPtr &Mem : Members)
    if ((!IdleOnly || Mem->Idle) && (!Only || Mem->Order == *Only) &&
        !llvm::is_contained(Tried, Mem->Order) && (!Best || better(*Mem, *Best, Oldest)))
      Best = Mem;
  return Best;
}

// A healthy member not in Tried, counted as used (release() it): the one
// Place pins the launch to, else any. With none, waits up to the handshake
// timeout for one to join; a pinned launch's member joins no more.
Expected<MemberPtr> Pool::Impl::pick(ArrayRef<uint64_t> Tried, bool Oldest,
                                     const Placement &Place) {
  sync::UniqueLock L(M);
  MemberPtr Best;
  auto Find = [&]() REQUIRES(M) {
    Best = best(Tried, Oldest, /*IdleOnly=*/false, Place.Home);
    return Closing || Best || Place.Home;
  };
  Changed.wait_for(L, Opts.Member.HandshakeTimeout, Find);
  if (Closing)
    return makeFailure(FailureKind::Closed, Address + ": the pool is closed");
  if (!Best && Place.Home)
    return lostHome(Place);
  if (!Best)
    return makeFailure(noMemberKind(Tried),
                       Address + ": no member " + (Tried.empty() ? "" : "left ") +
                           "to run on: " + (Tried.empty() ? "none" : "none besides those lost") +
                           " joined within " +
                           std::to_string(Opts.Member.HandshakeTimeout.count()) +
                           " ms (the handshake timeout), from " + Source->describe());
  hold(*Best);
  return Best;
}

void Pool::Impl::hold(pool::Member &Mem) {
  ++Mem.Holds;
  ++Mem.Running;
}

void Pool::Impl::release(const MemberPtr &Mem) {
  --Mem->Running;
  --Mem->Holds;
}

// Sends Mem what was sent to the pool and it has not had yet, in order.
Error Pool::Impl::catchUp(pool::Member &Mem) {
  if (Mem.Shipped >= BinaryCount)
    return Error::success();
  sync::MutexLock Shipping(Mem.ShipMutex);
  for (;;) {
    PoolBinary B;
    {
      sync::MutexLock L(M);
      if (Mem.Shipped >= Binaries.size())
        return Error::success();
      B = Binaries[Mem.Shipped];
    }
    if (!B.Failed)
      if (Error Err = Mem.S->sendBinary(B.Path, B.Format))
        return Err;
    ++Mem.Shipped;
  }
}

// Whether Mem has every file and upload sent to the pool, catching it up
// if not. A member that cannot take them never ran the launch, which goes
// elsewhere: the member is replaced by a new session when only its
// connection ended, else dropped.
bool Pool::Impl::caughtUp(const MemberPtr &Mem) {
  Error Err = catchUp(*Mem);
  if (!Err)
    Err = catchUpResidents(*Mem);
  if (!Err)
    return true;
  std::string Why = toString(std::move(Err));
  if (Mem->S->connected() || !rejoin(Mem))
    drop(Mem, "it cannot take what was sent to the pool: " + Why);
  return false;
}

// A launch no member takes, blocking or asynchronous, leaves its outputs
// zeroed, as a session's failed launch does, so that a caller freeing
// them frees nothing.
static void zeroOutputs(const LaunchCall &Call) {
  for (const MemrefArg &Out : Call.Outputs)
    if (Out.Desc)
      std::memset(Out.Desc, 0, (3 + 2 * Out.Rank) * sizeof(int64_t));
}

Error Pool::Impl::runOn(const MemberPtr &Mem, const LaunchCall &Call) {
  // Only a launch that names residents needs them named to the member.
  std::optional<MemberCall> Ran;
  if (Call.namesResidents()) {
    auto Named = onMember(Call, Mem);
    if (!Named) {
      zeroOutputs(Call);
      return Named.takeError();
    }
    Ran = std::move(*Named);
  }
  ++Mem->Started;
  Error Err = Mem->S->launch(Ran ? Ran->Call : Call);
  if (!Err && Ran)
    adoptKept(Call, *Ran, Mem);
  sync::MutexLock L(M);
  ++Launches;
  if (!Err)
    LastMember = Mem;
  return Err;
}

// What a launch's failure on Mem means. Its member lives: the launch's
// own error, naming the member. Its member was lost: with
// RetryOnMemberLoss, Retry and success, unless Place pins the launch to
// that member (it reads an output kept there); else an error saying so.
Error Pool::Impl::afterFailure(const MemberPtr &Mem, Error Err, StringRef Entry,
                               const Placement &Place, bool &Retry) {
  Retry = false;
  std::string Head = Address + ": launch of '" + Entry.str() + "' on member " + Mem->label();
  if (Mem->S->connected() || rejoin(Mem))
    return withContext(Head, std::move(Err));
  if (Place.Home)
    return makeFailure(FailureKind::ExecutorLost,
                       Head +
                           " failed: the member was lost, and with it the output kept there "
                           "that the launch reads, so it does not run elsewhere: " +
                           toString(std::move(Err)));
  if (!Opts.RetryOnMemberLoss)
    return makeFailure(FailureKind::ExecutorLost,
                       Head +
                           " failed: the member was lost (runs again elsewhere only with "
                           "PoolOptions::RetryOnMemberLoss, CATALYST_REMOTE_POOL_RETRY=1): " +
                           toString(std::move(Err)));
  // The launch runs again elsewhere: its failure here was its member's
  // loss, which the pool reports and counts (Retried) itself.
  consumeError(std::move(Err));
  sync::MutexLock L(M);
  ++Retried;
  Retry = true;
  return Error::success();
}

Error Pool::Impl::launch(const LaunchCall &Call) {
  auto Place = placement(Call);
  if (!Place) {
    zeroOutputs(Call);
    return Place.takeError();
  }
  std::vector<uint64_t> Tried;
  for (;;) {
    auto Mem = pick(Tried, /*Oldest=*/false, *Place);
    if (!Mem) {
      zeroOutputs(Call);
      return Mem.takeError();
    }
    if (!caughtUp(*Mem)) {
      Tried.push_back((*Mem)->Order);
      release(*Mem);
      continue;
    }
    Error Err = runOn(*Mem, Call);
    bool Retry = false;
    if (Err)
      Err = afterFailure(*Mem, std::move(Err), Call.Entry, *Place, Retry);
    release(*Mem);
    if (!Retry)
      return Err;
    consumeError(std::move(Err)); // success: the launch runs again
    Tried.push_back((*Mem)->Order);
  }
}

uint64_t Pool::Impl::launchAsync(const LaunchCall &Call) {
  auto Place = placement(Call);
  PoolJob Job{0,
              Call.Entry.str(),
              Call.Object.str(),
              Call.Inputs.vec(),
              Call.Outputs.vec(),
              Call.Into.vec(),
              Call.Keep.vec(),
              Place ? *Place : Placement(),
              {},
              Clock::now(),
              std::nullopt};
  sync::MutexLock L(M);
  Job.Ticket = NextTicket++;
  uint64_t Ticket = Job.Ticket;
  if (Closing) {
    zeroOutputs(Call);
    if (!Place) // the pool's closing is what the caller hears of
      consumeError(Place.takeError());
    Finished.emplace(
        Ticket, makeFailure(FailureKind::Closed, Address + ": launch of '" + Job.Entry +
                                                     "' was queued after the pool was closed"));
    return Ticket;
  }
  if (!Place) {
    zeroOutputs(Call);
    Finished.emplace(Ticket, Place.takeError());
    return Ticket;
  }
  Pending.insert(Ticket);
  Queue.push_back(std::move(Job));
  if (!AsyncStarted) {
    AsyncStarted = true;
    for (const MemberPtr &Mem : Members)
      startWorker(Mem);
  }
  dispatch();
  return Ticket;
}

// A ticket never issued, or awaited before, is nothing to wait for.
Error Pool::Impl::await(uint64_t Ticket) {
  sync::UniqueLock L(M);
  if (!Pending.count(Ticket) && !Finished.count(Ticket))
    return Error::success();
  Changed.wait(L, [&]() REQUIRES(M) { return Finished.count(Ticket) != 0; });
  auto It = Finished.find(Ticket);
  Error Err = std::move(It->second);
  Finished.erase(It);
  return Err;
}

void Pool::Impl::startWorker(const MemberPtr &Mem) {
  Mem->Idle = true;
  Mem->Worker = std::thread([this, Mem] { work(Mem); });
  dispatch();
}

// Hands each queued launch nobody holds to the idle member that ranks best
// (best()) among those it was not lost on, and wakes that member's
// worker. Placement is thus the pool's, as for blocking launches: a launch
// never goes to a member whose worker merely woke first, so launches
// spread over idle members in turn however the threads are scheduled.
void Pool::Impl::dispatch() {
  size_t Idle = llvm::count_if(Members, [](const MemberPtr &Mem) { return Mem->Idle; });
  for (PoolJob &Job : Queue) {
    if (!Idle)
      return;
    if (Job.For)
      continue;
    MemberPtr Best = best(Job.Tried, /*Oldest=*/false, /*IdleOnly=*/true, Job.Place.Home);
    if (!Best)
      continue;
    Job.For = Best->Order;
    Best->Idle = false;
    --Idle;
    Best->Wake.notify_one();
  }
}

// A member's worker: runs the launches handed to it until the member goes,
// which close() makes every member do only once no launch is pending: a
// launch queued again while the pool closes still finds a worker. One it
// holds when its member goes goes back to the others.
void Pool::Impl::work(MemberPtr Mem) {
  // Its own track in a trace (SessionTrace names host tracks by thread).
  // A name of more than 15 characters is refused, which this never is; a
  // refused one leaves the track the name the thread inherited, no more.
  std::string Name = "pool member " + std::to_string(Mem->Order % 1000);
  ::pthread_setname_np(::pthread_self(), Name.c_str());
  sync::UniqueLock L(M);
  for (;;) {
    auto Next = Queue.end();
    Mem->Wake.wait(L, [&]() REQUIRES(M) {
      Next = llvm::find_if(Queue, [&](const PoolJob &J) { return J.For == Mem->Order; });
      return Mem->Gone || Next != Queue.end();
    });
    if (Mem->Gone)
      break;
    PoolJob Job = std::move(*Next);
    Queue.erase(Next);
    hold(*Mem);
    L.unlock();
    Error Err = Error::success();
    bool Retry = !caughtUp(Mem);
    if (!Retry && (Err = runOn(Mem, Job.call())))
      Err = afterFailure(Mem, std::move(Err), Job.Entry, Job.Place, Retry);
    release(Mem);
    L.lock();
    if (Retry) {
      consumeError(std::move(Err)); // success: the launch runs again
      Job.Tried.push_back(Mem->Order);
      Job.Since = Clock::now();
      Job.For.reset();
      Queue.push_front(std::move(Job));
    } else {
      Pending.erase(Job.Ticket);
      Finished.emplace(Job.Ticket, std::move(Err));
      Changed.notify_all();
    }
    Mem->Idle = !Mem->Gone;
    dispatch();
  }
  Mem->Idle = false;
  for (PoolJob &Job : Queue)
    if (Job.For == Mem->Order)
      Job.For.reset();
  dispatch();
  Mem->WorkerDone = true;
}

// Fails queued launches that no healthy member may take (each lost its
// member on all of them, or none is left) and that waited longer than the
// handshake timeout for one to join; and at once those pinned to a member
// that was lost.
void Pool::Impl::failStranded() {
  sync::MutexLock L(M);
  auto Now = Clock::now();
  for (auto It = Queue.begin(); It != Queue.end();) {
    const Placement &Place = It->Place;
    bool Takeable = llvm::any_of(Members, [&](const MemberPtr &Mem) {
      return !llvm::is_contained(It->Tried, Mem->Order) &&
             (!Place.Home || Mem->Order == *Place.Home);
    });
    if (Takeable || (!Place.Home && Now - It->Since < Opts.Member.HandshakeTimeout)) {
      ++It;
      continue;
    }
    zeroOutputs(It->call());
    if (Place.Home) {
      Finished.emplace(It->Ticket, withContext("launch of '" + It->Entry + "'", lostHome(Place)));
      Pending.erase(It->Ticket);
      It = Queue.erase(It);
      Changed.notify_all();
      continue;
    }
    Finished.emplace(It->Ticket,
                     makeFailure(noMemberKind(It->Tried),
                                 Address + ": launch of '" + It->Entry + "' waited " +
                                     std::to_string(Opts.Member.HandshakeTimeout.count()) +
                                     " ms (the handshake timeout) for a member: none " +
                                     (It->Tried.empty() ? "" : "besides those lost ") + "is left"));
    Pending.erase(It->Ticket);
    It = Queue.erase(It);
    Changed.notify_all();
  }
}

} // namespace catalyst::remote
