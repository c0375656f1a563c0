//===- PmixSource.cpp - Members announced through PMIx --------------------===//
//
// A host started in the same PMIx job as its executors (an MPMD
// `mpirun -n 1 host : -n 4 catalyst-remote-executor ... --announce pmix`,
// or a heterogeneous Slurm job under srun --mpi=pmix) reads the address
// each executor rank published under PmixAddressKey.
//
// No collective fence: the host cannot know when every executor has
// published, and a fence would wait for ranks that never call it. Each
// value is fetched per rank with PMIx_Get_nb and a PMIX_TIMEOUT, which
// PMIx serves by direct modex: the host's PMIx server asks the server of
// the rank's node, which answers once that rank has committed the key, or
// times out. Measured with Debian 12's Open MPI 4.1.4 and PMIx 4.2.2: a
// Get before the executor's Commit times out after the 1 s asked; one
// after it returns the value at once. A rank that has not published yet
// is simply asked again at the next poll().
//
// Only ranks of other applications than the host's own (PMIX_APPNUM) are
// candidates: in an MPMD job the host's own app holds hosts, not
// executors. PMIx has no way to take a value back, so a member whose
// executor stopped stays announced: the pool's liveness drops it.
//
// Thread safety: as MemberSource; PMIx calls back on its own progress
// thread, which only touches Lookups under its mutex.
//
//===----------------------------------------------------------------------===//

#include "MemberSource.h"
#include "sync/Mutex.h"
#include "wire/PmixKey.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <pmix.h>

using namespace llvm;

namespace catalyst::remote::pool {

namespace {

using Clock = std::chrono::steady_clock;

// How long PMIx may take to answer one Get (PMIX_TIMEOUT is in whole
// seconds), and how long poll() waits for all the Gets it issued.
constexpr int GetTimeoutSeconds = 1;
constexpr std::chrono::milliseconds PollBound{2000};
// A job larger than this is not believed.
constexpr uint32_t MaxJobSize = 1 << 20;

Error pmixError(const Twine &What, pmix_status_t Rc) {
  return createStringError(inconvertibleErrorCode(),
                           "pool:pmix: " + What + ": " + PMIx_Error_string(Rc));
}

// An address as a peer published it: a string of printable characters
// without spaces, of a bounded length; anything else is skipped.
std::optional<std::string> addressIn(const pmix_value_t *V) {
  if (!V || V->type != PMIX_STRING || !V->data.string)
    return std::nullopt;
  size_t Len = ::strnlen(V->data.string, wire::MaxPmixAddress + 1);
  if (Len == 0 || Len > wire::MaxPmixAddress)
    return std::nullopt;
  StringRef A(V->data.string, Len);
  if (!all_of(A, [](char C) { return C > ' ' && C < 127; }))
    return std::nullopt;
  return A.str();
}

// What the Gets in flight found, shared with PMIx's callbacks, which may
// outlive the source (a Get times out after it is gone).
struct Lookups {
  sync::Mutex M;
  sync::CondVar Answered; // with M: InFlight went down
  std::map<pmix_rank_t, std::string> Found GUARDED_BY(M);
  std::map<pmix_rank_t, bool> InFlight GUARDED_BY(M); // true while asked
  size_t Outstanding GUARDED_BY(M) = 0;
};

struct Request {
  std::shared_ptr<Lookups> State;
  pmix_rank_t Rank;
};

// On PMIx's progress thread; V is the library's, released after this.
void onValue(pmix_status_t Status, pmix_value_t *V, void *Data) {
  std::unique_ptr<Request> R(static_cast<Request *>(Data));
  Lookups &L = *R->State;
  sync::MutexLock Lock(L.M);
  if (Status == PMIX_SUCCESS)
    if (auto A = addressIn(V))
      L.Found[R->Rank] = std::move(*A);
  L.InFlight[R->Rank] = false;
  --L.Outstanding;
  L.Answered.notify_all();
}

// A value of this process's job: its size, or a rank's app number.
Expected<uint32_t> jobNumber(const pmix_proc_t &Who, const char *Key) {
  pmix_info_t Info;
  int Timeout = GetTimeoutSeconds;
  PMIX_INFO_LOAD(&Info, PMIX_TIMEOUT, &Timeout, PMIX_INT);
  pmix_value_t *V = nullptr;
  pmix_status_t Rc = PMIx_Get(&Who, Key, &Info, 1, &V);
  PMIX_INFO_DESTRUCT(&Info);
  if (Rc != PMIX_SUCCESS)
    return pmixError(Twine("reading ") + Key + " of rank " + Twine(Who.rank), Rc);
  uint32_t N = 0;
  bool Fits = V && (V->type == PMIX_UINT32 || V->type == PMIX_PROC_RANK);
  if (Fits)
    N = V->type == PMIX_UINT32 ? V->data.uint32 : V->data.rank;
  if (V)
    PMIX_VALUE_RELEASE(V);
  if (!Fits)
    return createStringError(inconvertibleErrorCode(), "pool:pmix: %s of rank %u is not a number",
                             Key, Who.rank);
  return N;
}

class PmixSource final : public MemberSource {
public:
  PmixSource(const pmix_proc_t &Me, std::vector<pmix_rank_t> Candidates)
      : Me(Me), Candidates(std::move(Candidates)), State(std::make_shared<Lookups>()) {}

  // Waits, bounded, for the Gets still out, so that PMIx is not finalized
  // under them; those that still have not answered keep State alive.
  ~PmixSource() override {
    {
      sync::UniqueLock Lock(State->M);
      State->Answered.wait_for(Lock, PollBound,
                               [&]() REQUIRES(State->M) { return State->Outstanding == 0; });
    }
    PMIx_Finalize(nullptr, 0);
  }

  Expected<std::vector<Announced>> poll() override {
    for (pmix_rank_t R : Candidates)
      ask(R);
    sync::UniqueLock Lock(State->M);
    State->Answered.wait_for(Lock, PollBound,
                             [&]() REQUIRES(State->M) { return State->Outstanding == 0; });
    std::vector<Announced> Now;
    for (auto &[Rank, Address] : State->Found)
      Now.push_back({"rank " + std::to_string(Rank), Address});
    return Now;
  }

  std::string describe() const override {
    return "PMIx namespace " + std::string(Me.nspace) + " (" + std::to_string(Candidates.size()) +
           " ranks of other applications)";
  }

private:
  // Asks for Rank's address unless it is known or being asked already.
  void ask(pmix_rank_t Rank) {
    {
      sync::MutexLock Lock(State->M);
      if (State->Found.count(Rank) || State->InFlight[Rank])
        return;
      State->InFlight[Rank] = true;
      ++State->Outstanding;
    }
    pmix_proc_t Peer;
    PMIX_LOAD_PROCID(&Peer, Me.nspace, Rank);
    int Timeout = GetTimeoutSeconds;
    pmix_info_t Info;
    PMIX_INFO_LOAD(&Info, PMIX_TIMEOUT, &Timeout, PMIX_INT);
    auto *R = new Request{State, Rank};
    pmix_status_t Rc = PMIx_Get_nb(&Peer, wire::PmixAddressKey, &Info, 1, onValue, R);
    PMIX_INFO_DESTRUCT(&Info);
    if (Rc == PMIX_SUCCESS)
      return;
    // Not queued: no callback will come. Asked again at the next poll.
    delete R;
    sync::MutexLock Lock(State->M);
    State->InFlight[Rank] = false;
    --State->Outstanding;
  }

  pmix_proc_t Me;
  const std::vector<pmix_rank_t> Candidates;
  std::shared_ptr<Lookups> State;
};

// The ranks of Me's job in other applications than Me's.
Expected<std::vector<pmix_rank_t>> candidates(const pmix_proc_t &Me) {
  pmix_proc_t Job;
  PMIX_LOAD_PROCID(&Job, Me.nspace, PMIX_RANK_WILDCARD);
  auto Size = jobNumber(Job, PMIX_JOB_SIZE);
  if (!Size)
    return Size.takeError();
  if (*Size > MaxJobSize)
    return createStringError(inconvertibleErrorCode(),
                             "pool:pmix: the job claims %u ranks, more than %u", *Size, MaxJobSize);
  pmix_proc_t Self;
  PMIX_LOAD_PROCID(&Self, Me.nspace, Me.rank);
  auto Mine = jobNumber(Self, PMIX_APPNUM);
  if (!Mine)
    return Mine.takeError();
  std::vector<pmix_rank_t> Out;
  for (uint32_t R = 0; R < *Size; ++R) {
    if (R == Me.rank)
      continue;
    pmix_proc_t Peer;
    PMIX_LOAD_PROCID(&Peer, Me.nspace, R);
    auto App = jobNumber(Peer, PMIX_APPNUM);
    if (!App)
      return App.takeError();
    if (*App != *Mine)
      Out.push_back(R);
  }
  return Out;
}

} // namespace

Expected<std::unique_ptr<MemberSource>> pmixSource() {
  pmix_proc_t Me;
  if (pmix_status_t Rc = PMIx_Init(&Me, nullptr, 0); Rc != PMIX_SUCCESS)
    return pmixError("this process is not part of a PMIx job (start it with mpirun, or srun "
                     "--mpi=pmix, beside executors started with --announce pmix); PMIx_Init",
                     Rc);
  auto Ranks = candidates(Me);
  if (!Ranks) {
    PMIx_Finalize(nullptr, 0);
    return Ranks.takeError();
  }
  return std::make_unique<PmixSource>(Me, std::move(*Ranks));
}

} // namespace catalyst::remote::pool
