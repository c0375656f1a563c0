//===- Pool.cpp - Opening, closing, and calls that reach every member -----===//

#include "../session/ResidentAccess.h"
#include "PoolImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>

using namespace llvm;

namespace catalyst::remote {

namespace {

constexpr StringLiteral Prefix = "pool:";

} // namespace

Pool::Impl::Impl(std::string Address, std::unique_ptr<pool::MemberSource> Source, PoolOptions Opts)
    : Address(std::move(Address)), Opts(std::move(Opts)), Source(std::move(Source)),
      ResidentOwner(ResidentAccess::newOwner()), TracePath(this->Opts.Member.TracePath) {}

// Joins what the source announces until MinMembers are in or the handshake
// timeout passes, then leaves the source to the watcher.
Error Pool::Impl::start() {
  auto Deadline = Clock::now() + Opts.Member.HandshakeTimeout;
  for (;;) {
    refresh();
    sync::UniqueLock L(M);
    if (Members.size() >= Opts.MinMembers)
      break;
    if (Clock::now() >= Deadline) {
      std::string Why = std::to_string(Members.size()) + " of the " +
                        std::to_string(Opts.MinMembers) + " members needed joined within " +
                        std::to_string(Opts.Member.HandshakeTimeout.count()) +
                        " ms (the handshake timeout), from " + Source->describe();
      if (!SourceFailure.empty())
        Why += "; " + SourceFailure;
      for (auto &[Who, Failure] : JoinFailures)
        Why += "; " + Who + ": " + Failure.Why;
      L.unlock();
      consumeError(close()); // nothing was queued: closing sessions cannot fail a launch
      return makeFailure(FailureKind::Timeout, Address + ": " + Why);
    }
    Changed.wait_until(L, std::min(Deadline, Clock::now() + Opts.PollInterval));
  }
  Watcher = std::thread([this] { watch(); });
  return Error::success();
}

std::vector<MemberPtr> Pool::Impl::useAll() {
  sync::MutexLock L(M);
  for (const MemberPtr &Mem : Members)
    Pool::Impl::hold(*Mem);
  return Members;
}

Error Pool::Impl::sendBinary(StringRef Path, BinaryFormat Format) {
  size_t Index;
  std::vector<MemberPtr> All;
  {
    sync::MutexLock L(M);
    if (Closing)
      return makeFailure(FailureKind::Closed,
                         Address + ": send_binary of " + Path + ": the pool is closed");
    Binaries.push_back({Path.str(), Format});
    Index = Binaries.size() - 1;
    BinaryCount = Binaries.size();
  }
  All = useAll();
  MemberRefusals Refused = onEach(All, [&](size_t I) { return catchUp(*All[I]); });
  for (const MemberPtr &Mem : All)
    release(Mem);
  if (!Refused.Count)
    return Error::success();
  {
    sync::MutexLock L(M);
    Binaries[Index].Failed = true;
  }
  return makeFailure(Refused.Kind,
                     Address + ": send_binary of " + Path + " failed on " + Refused.of(All.size()));
}

MemberRefusals Pool::Impl::onEach(ArrayRef<MemberPtr> All, function_ref<Error(size_t)> Call) {
  std::vector<std::optional<FailureReport>> Failures(All.size());
  atOnce(All.size(), [&](size_t I) {
    if (Error Err = Call(I))
      Failures[I] = reportFailure(std::move(Err));
  });
  MemberRefusals Out;
  for (size_t I = 0; I < All.size(); ++I) {
    if (!Failures[I])
      continue;
    // One that lost its connection gets what was sent again with its next
    // session, or is gone: it did not refuse it.
    if (!All[I]->S->connected()) {
      rejoin(All[I]);
      continue;
    }
    if (Out.Count++ == 0)
      Out.Kind = Failures[I]->Kind;
    Out.Text += "; member " + All[I]->label() + ": " + Failures[I]->Message;
  }
  return Out;
}

Expected<std::vector<char>> Pool::Impl::callWrapper(StringRef Symbol, ArrayRef<char> Args) {
  auto Mem = pick({}, /*Oldest=*/true);
  if (!Mem)
    return Mem.takeError();
  Error Err = catchUp(**Mem);
  Expected<std::vector<char>> Reply =
      Err ? Expected<std::vector<char>>(std::move(Err)) : (*Mem)->S->callWrapper(Symbol, Args);
  if (!Reply && !(*Mem)->S->connected())
    rejoin(*Mem);
  std::string Label = (*Mem)->label();
  release(*Mem);
  if (!Reply)
    return withContext(Address + ": call_wrapper " + Symbol + " on member " + Label,
                       Reply.takeError());
  return Reply;
}

std::vector<MemberReply> Pool::Impl::callWrapperOnAll(StringRef Symbol, ArrayRef<char> Args) {
  std::vector<MemberPtr> All = useAll();
  std::vector<std::optional<Expected<std::vector<char>>>> Results(All.size());
  atOnce(All.size(), [&](size_t I) {
    if (Error Err = catchUp(*All[I]))
      Results[I].emplace(std::move(Err));
    else
      Results[I].emplace(All[I]->S->callWrapper(Symbol, Args));
  });
  std::vector<MemberReply> Replies;
  for (size_t I = 0; I < All.size(); ++I) {
    Replies.push_back({All[I]->Name, All[I]->Address, std::move(*Results[I])});
    release(All[I]);
  }
  return Replies;
}

void Pool::Impl::forEachMember(function_ref<void(StringRef, StringRef, Session &)> F) {
  std::vector<MemberPtr> All = useAll();
  atOnce(All.size(), [&](size_t I) { F(All[I]->Name, All[I]->Address, *All[I]->S); });
  for (const MemberPtr &Mem : All)
    release(Mem);
}

// Reads each member's session outside M: a session's stats wait for its
// launch in flight.
PoolStats Pool::Impl::stats() const {
  struct Seen {
    MemberPtr Mem;
    bool Healthy, Released;
    std::string Dropped;
    SessionStats Final;
  };
  std::vector<Seen> All;
  MemberPtr LastBy;
  PoolStats Out;
  {
    sync::MutexLock L(M);
    Out.Launches = Launches;
    Out.Retried = Retried;
    Out.MembersLost = MembersLost;
    LastBy = LastMember;
    for (const MemberPtr &Mem : Members)
      All.push_back({Mem, true, false, "", {}});
    for (const MemberPtr &Mem : Former)
      All.push_back({Mem, false, Mem->Released, Mem->Dropped, Mem->Final});
    for (const Seen &S : All)
      if (!S.Released)
        ++S.Mem->Holds;
  }
  for (const Seen &S : All) {
    SessionStats St = S.Released ? S.Final : S.Mem->S->stats();
    Strategy Transfer = S.Released ? Strategy::Auto : S.Mem->S->strategy();
    Out.Members.push_back(
        {S.Mem->Name, S.Mem->Address, S.Healthy, S.Dropped, S.Mem->Running, Transfer, St});
    Out.Total += St.Total;
    if (S.Mem == LastBy)
      Out.Last = St.Last;
    if (!S.Released)
      --S.Mem->Holds;
  }
  return Out;
}

// Waits for queued launches (failing those no member is left to run),
// stops the watcher and the workers, and closes every session.
Error Pool::Impl::close() {
  sync::UniqueLock L(M);
  if (Closing)
    return Error::success();
  Closing = true;
  wakeAll();
  while (!Pending.empty()) {
    Changed.wait_for(L, Opts.PollInterval);
    L.unlock();
    failStranded();
    L.lock();
  }
  L.unlock();
  if (Watcher.joinable())
    Watcher.join();
  L.lock();
  std::vector<MemberPtr> All = Members;
  All.insert(All.end(), Former.begin(), Former.end());
  for (const MemberPtr &Mem : Members)
    Mem->Gone = true;
  Former.insert(Former.end(), Members.begin(), Members.end());
  Members.clear();
  // The host's copies of uploads go now; the members' sessions free theirs
  // as they close.
  Residents.clear();
  wakeAll();
  L.unlock();
  for (const MemberPtr &Mem : All)
    if (Mem->Worker.joinable())
      Mem->Worker.join();
  // A call still in flight on another thread fails, as on a Session; its
  // member's session is freed with the pool.
  {
    sync::MutexLock G(M);
    llvm::erase_if(All, [](const MemberPtr &Mem) { return Mem->Released; });
  }
  for (const MemberPtr &Mem : All)
    consumeError(Mem->S->close()); // as Session::close: nothing queued is lost
  releaseUnused();
  L.lock();
  FailureReport Unawaited;
  size_t Failures = 0;
  for (auto &[Ticket, Err] : Finished)
    if (Err) {
      FailureReport R = reportFailure(std::move(Err));
      if (Failures++ == 0)
        Unawaited = std::move(R);
    }
  Finished.clear();
  if (!Failures)
    return Error::success();
  return makeFailure(Unawaited.Kind,
                     Address + ": " + std::to_string(Failures) +
                         " launches nobody awaited failed, the first: " + Unawaited.Message);
}

bool Pool::isPoolAddress(StringRef Address) {
  return Address.starts_with(Prefix);
}

Expected<std::unique_ptr<Pool>> Pool::open(StringRef Address, const PoolOptions &Options) {
  if (!isPoolAddress(Address))
    return makeFailure(FailureKind::BadArgument,
                       "'" + Address +
                           "' is not a pool address (pool:DIR, pool:pmix, pool:ADDR,...)");
  auto Source = pool::memberSourceFor(Address.drop_front(Prefix.size()));
  if (!Source)
    return withContext(Address, Source.takeError());
  auto I = std::make_unique<Impl>(Address.str(), std::move(*Source), Options);
  if (Error Err = I->start())
    return Err;
  return std::unique_ptr<Pool>(new Pool(std::move(I)));
}

Pool::Pool(std::unique_ptr<Impl> I) : I(std::move(I)) {}

Pool::~Pool() {
  // A destructor cannot report: launches nobody awaited are the caller's
  // to have awaited, and close() is how to hear of them.
  consumeError(I->close());
}

StringRef Pool::address() const {
  return I->Address;
}

size_t Pool::members() const {
  sync::MutexLock L(I->M);
  return I->Members.size();
}

bool Pool::connected() const {
  sync::MutexLock L(I->M);
  return !I->Closing;
}

Error Pool::sendBinary(StringRef Path, BinaryFormat Format) {
  return I->sendBinary(Path, Format);
}

Expected<std::vector<char>> Pool::callWrapper(StringRef Symbol, ArrayRef<char> Args) {
  return I->callWrapper(Symbol, Args);
}

std::vector<MemberReply> Pool::callWrapperOnAll(StringRef Symbol, ArrayRef<char> Args) {
  return I->callWrapperOnAll(Symbol, Args);
}

void Pool::forEachMember(function_ref<void(StringRef, StringRef, Session &)> F) {
  I->forEachMember(F);
}

Expected<Resident> Pool::upload(const MemrefArg &In) {
  return I->upload(In);
}

Error Pool::fetch(const Resident &R, const MemrefArg &Out, MutableArrayRef<char> Into) {
  return I->fetch(R, Out, Into);
}

Error Pool::release(Resident &R) {
  return I->releaseResident(R);
}

Error Pool::launch(const LaunchCall &Call) {
  return I->launch(Call);
}

uint64_t Pool::launchAsync(const LaunchCall &Call) {
  return I->launchAsync(Call);
}

Error Pool::await(uint64_t Ticket) {
  return I->await(Ticket);
}

PoolStats Pool::stats() const {
  return I->stats();
}

Error Pool::startTrace(StringRef Path) {
  return I->startTrace(Path);
}

Error Pool::stopTrace() {
  return I->stopTrace();
}

Error Pool::close() {
  return I->close();
}

Expected<PoolOptions> poolOptionsFromEnvironment(PoolOptions Opts) {
  auto Member = optionsFromEnvironment(std::move(Opts.Member));
  if (!Member)
    return Member.takeError();
  Opts.Member = std::move(*Member);
  if (const char *Min = std::getenv("CATALYST_REMOTE_POOL_MIN")) {
    unsigned long long N;
    if (StringRef(Min).getAsInteger(10, N) || N < 1 || N > 100000)
      return makeFailure(FailureKind::BadArgument,
                         "CATALYST_REMOTE_POOL_MIN='" + Twine(Min) +
                             "' is not a number of members from 1 to 100000");
    Opts.MinMembers = N;
  }
  if (const char *Retry = std::getenv("CATALYST_REMOTE_POOL_RETRY")) {
    if (StringRef(Retry) != "0" && StringRef(Retry) != "1")
      return makeFailure(FailureKind::BadArgument,
                         "CATALYST_REMOTE_POOL_RETRY='" + Twine(Retry) + "' is neither 0 nor 1");
    Opts.RetryOnMemberLoss = StringRef(Retry) == "1";
  }
  return Opts;
}

} // namespace catalyst::remote
