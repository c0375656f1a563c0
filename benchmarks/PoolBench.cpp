//===- PoolBench.cpp - How launches scale over a pool's members -----------===//
//
// A pool (catalyst/remote/Pool.h) of N real executors, N = 1, 2, 4, kept
// busy with asynchronous launches: D launches in flight at all times
// (Pool::launchAsync, await of the oldest, the next launch on the case it
// freed), each output checked at both ends and the middle and freed, as
// a caller would use it:
//
//   pool/tiny/<N>members/depth<D>  8-byte launches of forward.o, D = 1 or
//        8, in samples of 300; each iteration also runs a sample through a
//        single Session to the first member with the same depth, taking
//        turns at going first. launches_per_s (the pool's) and
//        session_launches_per_s are medians over the samples;
//        ratio_to_session is their ratio, scaling their ratio over N (1:
//        N members did N times one member's work)
//   pool/sweep/<N>members/depth8  a sweep: launches of sweep.o on a 64 MiB
//        constant uploaded to the pool (every member holds a copy) and an
//        8-byte parameter, 8 in flight, in samples of 300, beside a single
//        Session to the first member sweeping its own upload of the same
//        constant; counters as the tiny rows'. The constant never crosses
//        again, so the pool should scale as tiny launches do
//   pool/16MiB/<N>members  16 MiB each way, 2N in flight, 4N launches per
//        sample; each iteration also times one raw TCP exchange of the
//        same bytes over the first member's link (RawPeer.h: one link's
//        raw rate), taking turns. aggregate_GBps counts both directions of
//        every launch of a sample over its time; raw_GBps the same of the
//        raw exchange; ratio_to_links = aggregate / (N x raw)
//
// Every row also says which processes kept the CPUs busy during the pool's
// samples (CpuUse.h: cpu_host, cpu_members, cpu_relays, cpu_softirq,
// cpu_machine, cpu_other, in CPUs), so that a row whose CPUs, not its
// links, were the limit shows it. tools/bench-report puts the rows of a
// link in one table against N, with the N = 1 rows of the same run.
//
// Members: the first N of CATALYST_REMOTE_ADDRESS when it lists that many
// (tools/bench's network links: one executor per member namespace, each
// behind its own link), with their pids in CATALYST_REMOTE_MEMBER_PIDS and
// the delay relays in front of them in CATALYST_REMOTE_RELAY_PIDS when
// known; else N started on loopback, placed as the first (Pinning.h).
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "CpuUse.h"
#include "LaunchCase.h"
#include "catalyst/remote/Pool.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdlib>
#include <deque>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

constexpr unsigned PoolWidths[] = {1, 2, 4};
constexpr unsigned TinyDepths[] = {1, 8};
constexpr uint64_t TinyBytes = 8;
constexpr uint64_t TinyPerSample = 300;
constexpr int64_t TinyIterations = 7;
constexpr uint64_t SweepConstantBytes = 64 * MiB;
constexpr unsigned SweepDepth = 8;
constexpr uint64_t BulkBytes = 16 * MiB;
constexpr unsigned BulkPerMember = 4; // launches per member per sample
constexpr int64_t BulkIterations = 5;

constexpr const char *MemberPidsVar = "CATALYST_REMOTE_MEMBER_PIDS";
constexpr const char *RelayPidsVar = "CATALYST_REMOTE_RELAY_PIDS";

// The first Count pids of a comma list in Var; none when unset, malformed
// or shorter (what is not known is not counted, rather than miscounted).
std::vector<pid_t> pidsFrom(const char *Var, size_t Count) {
  const char *Value = std::getenv(Var);
  std::vector<pid_t> Pids;
  SmallVector<StringRef, 8> Parts;
  StringRef(Value ? Value : "").split(Parts, ',', -1, false);
  for (StringRef Part : Parts) {
    unsigned Pid = 0;
    if (Part.trim().getAsInteger(10, Pid) || Pid == 0)
      return {};
    Pids.push_back(pid_t(Pid));
  }
  if (Pids.size() < Count)
    return {};
  Pids.resize(Count);
  return Pids;
}

// The executors of the members executorsFor() picked, in the same order.
std::vector<pid_t> localPids(const BenchEnv &Env, unsigned N) {
  std::vector<pid_t> Pids;
  if (Env.Executor)
    Pids.push_back(Env.Executor->pid());
  for (const auto &E : Env.Extra)
    if (Pids.size() < N)
      Pids.push_back(E->pid());
  return Pids;
}

struct Members {
  std::vector<std::string> Addresses;
  bool Local = false;
  CpuWatch Watch;
};

Expected<Members> membersFor(BenchEnv &Env, unsigned N) {
  Members M;
  auto Addresses = executorsFor(Env, N, M.Local);
  if (!Addresses)
    return Addresses.takeError();
  M.Addresses = std::move(*Addresses);
  M.Watch.Executors = M.Local ? localPids(Env, N) : pidsFrom(MemberPidsVar, N);
  if (!M.Local)
    M.Watch.Relays = pidsFrom(RelayPidsVar, N);
  return M;
}

// Zero-copy sessions over TCP, as the launch rows' (never moved to the
// local socket: a pool's members are elsewhere), every member joined.
Expected<std::unique_ptr<Pool>> openPool(ArrayRef<std::string> Addresses) {
  PoolOptions O;
  O.Member.Outputs = OutputAllocator{std::malloc, std::free};
  O.Member.Strategy = Strategy::ZeroCopy;
  O.Member.Transport = TransportKind::Tcp;
  O.MinMembers = Addresses.size();
  auto P = Pool::open("pool:" + join(Addresses, ","), O);
  if (!P)
    return P.takeError();
  if (auto Err = (*P)->sendBinary(ForwardKernel, BinaryFormat::Object))
    return Err;
  for (const PoolMemberStats &M : (*P)->stats().Members)
    if (M.Strategy != Strategy::ZeroCopy)
      return createStringError(inconvertibleErrorCode(), "pool member %s offers %s, not zerocopy",
                               M.Address.c_str(), strategyName(M.Strategy));
  return P;
}

template <typename Case> using CasesOf = std::vector<std::unique_ptr<Case>>;
using Cases = CasesOf<LaunchCase>;

// One launch of a sweep (sweep.o) on a resident constant: the constant and
// an 8-byte parameter in, the parameter back, checked and freed.
class SweepCase {
public:
  explicit SweepCase(const Resident &Constant) : Constant(Constant) {}
  SweepCase(const SweepCase &) = delete;
  SweepCase &operator=(const SweepCase &) = delete;

  // A fresh parameter each time; the call points into this case.
  LaunchCall call() {
    ++Param;
    P = {&Param, &Param, 0, {1}, {1}};
    Out = {};
    In[0] = MemrefArg::of(Constant);
    In[1] = {&P, 1, 8};
    Outs[0] = {&Out, 1, 8};
    return {"sweep", SweepKernel, In, Outs};
  }
  Error finish(bool) { return takeParameter(Out, Param); }

private:
  const Resident &Constant;
  int64_t Param = 0;
  MemrefR1 P{}, Out{};
  MemrefArg In[2], Outs[1];
};

Cases makeCases(uint64_t Bytes, unsigned Depth) {
  Cases C;
  for (unsigned I = 0; I < Depth; ++I)
    C.push_back(std::make_unique<LaunchCase>(CaseShape{Bytes, 1, false}));
  return C;
}

// Count launches on T (a Pool or a Session), one case each, keeping
// every case in flight; returns the seconds from the first launchAsync to
// the last await. A launch that fails stops new ones; those in flight are
// awaited all the same, as their calls point into the cases.
template <typename Target, typename Case>
Expected<double> keepInFlight(Target &T, CasesOf<Case> &C, uint64_t Count, bool Everything) {
  std::deque<std::pair<uint64_t, Case *>> InFlight;
  uint64_t Issued = 0;
  Error Err = Error::success();
  auto Issue = [&](Case &L) {
    InFlight.emplace_back(T.launchAsync(L.call()), &L);
    ++Issued;
  };
  auto Start = Clock::now();
  for (auto &L : C)
    if (Issued < Count)
      Issue(*L);
  while (!InFlight.empty()) {
    auto [Ticket, L] = InFlight.front();
    InFlight.pop_front();
    Error Done = T.await(Ticket);
    if (!Done)
      Done = L->finish(Everything);
    Err = joinErrors(std::move(Err), std::move(Done));
    if (!Err && Issued < Count)
      Issue(*L);
  }
  double Seconds = secondsSince(Start);
  if (Err)
    return Err;
  return Seconds;
}

// The pool's launches must have reached every member, or the row measured
// fewer members than it names.
Error checkSpread(Pool &P, unsigned N) {
  PoolStats S = P.stats();
  unsigned Used = 0;
  for (const PoolMemberStats &M : S.Members)
    Used += M.Healthy && M.Session.Launches > 0;
  if (Used == N)
    return Error::success();
  return createStringError(inconvertibleErrorCode(), "%s: launches reached %u of its %u members",
                           P.address().str().c_str(), Used, N);
}

// One row's pool, its cases, and what its samples took.
template <typename Case> struct PoolRowOf {
  Members M;
  std::unique_ptr<Pool> P;
  CasesOf<Case> C;
  std::vector<double> Samples, Others; // seconds: the pool's, the reference's
  CpuUse Cpu;

  // One timed sample of Count launches, its CPU use counted.
  Error sample(uint64_t Count) {
    CpuSample Before = M.Watch.sample();
    auto T = keepInFlight(*P, C, Count, /*Everything=*/false);
    if (!T)
      return T.takeError();
    Cpu.add(Before, M.Watch.sample());
    Samples.push_back(*T);
    return Error::success();
  }
};

using PoolRow = PoolRowOf<LaunchCase>;

Expected<PoolRow> openRow(BenchEnv &Env, unsigned N, uint64_t Bytes, unsigned Depth) {
  PoolRow R;
  auto M = membersFor(Env, N);
  if (!M)
    return M.takeError();
  R.M = std::move(*M);
  auto P = openPool(R.M.Addresses);
  if (!P)
    return P.takeError();
  R.P = std::move(*P);
  R.C = makeCases(Bytes, Depth);
  // Untimed, every byte checked: each member's first launch resolves the
  // entry, and enough launches that every member takes some.
  auto Warm = keepInFlight(*R.P, R.C, uint64_t(std::max(Depth, N)) * 2, /*Everything=*/true);
  if (!Warm)
    return Warm.takeError();
  return R;
}

template <typename Case>
void reportCommon(benchmark::State &State, const PoolRowOf<Case> &R, unsigned N, unsigned Depth,
                  uint64_t PerSample, uint64_t PayloadBytes) {
  auto &C = State.counters;
  C["members"] = N;
  C["depth"] = Depth;
  C["launches_per_sample"] = double(PerSample);
  C["payload_bytes"] = double(PayloadBytes);
  R.Cpu.report(C);
  State.SetLabel(R.M.Local ? "executors=local" : "executors=given");
}

// Each iteration: a sample of PerSample launches on the pool and one
// reference measurement (Other, its seconds), taking turns at going first
// so that both see the same load.
template <typename Case>
Error sampleWithReference(benchmark::State &State, PoolRowOf<Case> &R, uint64_t PerSample,
                          function_ref<Expected<double>()> Other) {
  bool PoolFirst = true;
  for (auto _ : State) {
    for (bool OnPool : {PoolFirst, !PoolFirst}) {
      if (OnPool) {
        if (Error Err = R.sample(PerSample))
          return Err;
        continue;
      }
      auto T = Other();
      if (!T)
        return T.takeError();
      R.Others.push_back(*T);
    }
    State.SetIterationTime(R.Samples.back());
    PoolFirst = !PoolFirst;
  }
  return Error::success();
}

// The tiny and sweep rows' counters: the pool's launches per second and a
// session's, medians over the samples, and their ratios.
template <typename Case>
void reportRates(benchmark::State &State, const PoolRowOf<Case> &R, unsigned N, unsigned Depth,
                 uint64_t PayloadBytes) {
  double Pool = double(TinyPerSample) / median(R.Samples);
  double One = double(TinyPerSample) / median(R.Others);
  auto &C = State.counters;
  C["launches_per_s"] = Pool;
  C["session_launches_per_s"] = One;
  C["ratio_to_session"] = Pool / One;
  C["scaling"] = Pool / One / N;
  C["launch_us"] = median(R.Samples) / double(TinyPerSample) * 1e6;
  reportCommon(State, R, N, Depth, TinyPerSample, PayloadBytes);
}

void runTiny(benchmark::State &State, BenchEnv &Env, unsigned N, unsigned Depth) {
  auto R = openRow(Env, N, TinyBytes, Depth);
  if (!R)
    return fail(State, R.takeError());
  auto S = openSession(R->M.Addresses.front(), Strategy::ZeroCopy, {ForwardKernel});
  if (!S)
    return fail(State, joinErrors(S.takeError(), R->P->close()));
  Cases SessionCases = makeCases(TinyBytes, Depth);
  Error Err = keepInFlight(**S, SessionCases, Depth, /*Everything=*/true).takeError();
  if (!Err)
    Err = sampleWithReference(State, *R, TinyPerSample, [&] {
      return keepInFlight(**S, SessionCases, TinyPerSample, /*Everything=*/false);
    });
  if (!Err)
    Err = checkSpread(*R->P, N);
  Err = joinErrors(std::move(Err), joinErrors(R->P->close(), (*S)->close()));
  if (Err)
    return fail(State, std::move(Err));
  reportRates(State, *R, N, Depth, TinyBytes);
}

// A sweep on a constant the pool uploaded to every member, beside one
// session sweeping its own upload of it (the first member's).
Error sweepRow(benchmark::State &State, BenchEnv &Env, unsigned N, PoolRowOf<SweepCase> &R,
               Session &S) {
  std::vector<char> Constant(SweepConstantBytes);
  for (uint64_t I = 0; I < Constant.size(); I += 4096)
    Constant[I] = char(I >> 12);
  MemrefR1 C{Constant.data(), Constant.data(), 0, {int64_t(Constant.size())}, {1}};
  auto OnPool = R.P->upload({&C, 1, 1});
  if (!OnPool)
    return OnPool.takeError();
  auto OnSession = S.upload({&C, 1, 1});
  if (!OnSession)
    return joinErrors(OnSession.takeError(), R.P->release(*OnPool));
  CasesOf<SweepCase> SessionCases;
  for (unsigned I = 0; I < SweepDepth; ++I) {
    R.C.push_back(std::make_unique<SweepCase>(*OnPool));
    SessionCases.push_back(std::make_unique<SweepCase>(*OnSession));
  }
  // Untimed, every result checked: enough launches that every member
  // takes some.
  Error Err = keepInFlight(*R.P, R.C, uint64_t(std::max(SweepDepth, N)) * 2, /*Everything=*/true)
                  .takeError();
  if (!Err)
    Err = keepInFlight(S, SessionCases, SweepDepth, /*Everything=*/true).takeError();
  if (!Err)
    Err = sampleWithReference(State, R, TinyPerSample, [&] {
      return keepInFlight(S, SessionCases, TinyPerSample, /*Everything=*/false);
    });
  if (!Err)
    Err = checkSpread(*R.P, N);
  return joinErrors(std::move(Err), joinErrors(R.P->release(*OnPool), S.release(*OnSession)));
}

void runSweep(benchmark::State &State, BenchEnv &Env, unsigned N) {
  // Each member's copy, the session's, the host's and the pool's.
  if (skipUnlessMemory(State, (N + 3) * SweepConstantBytes, "this sweep"))
    return;
  PoolRowOf<SweepCase> R;
  auto M = membersFor(Env, N);
  if (!M)
    return fail(State, M.takeError());
  R.M = std::move(*M);
  auto P = openPool(R.M.Addresses);
  if (!P)
    return fail(State, P.takeError());
  R.P = std::move(*P);
  auto S = openSession(R.M.Addresses.front(), Strategy::ZeroCopy, {SweepKernel});
  Error Err = S ? R.P->sendBinary(SweepKernel, BinaryFormat::Object) : S.takeError();
  if (!Err)
    Err = sweepRow(State, Env, N, R, **S);
  Err = joinErrors(std::move(Err), R.P->close());
  if (S)
    Err = joinErrors(std::move(Err), (*S)->close());
  if (Err)
    return fail(State, std::move(Err));
  reportRates(State, R, N, SweepDepth, SweepConstantBytes);
}

void runBulk(benchmark::State &State, BenchEnv &Env, unsigned N) {
  unsigned Depth = 2 * N;
  uint64_t PerSample = uint64_t(BulkPerMember) * N;
  // Each case's input and output, each member's copy, the raw exchange's.
  if (skipUnlessMemory(State, (2 * Depth + 2 * N + 2) * BulkBytes, "this pool"))
    return;
  auto R = openRow(Env, N, BulkBytes, Depth);
  if (!R)
    return fail(State, R.takeError());
  auto Link = Env.Peer->connect(BulkBytes, BulkBytes);
  if (!Link)
    return fail(State, joinErrors(Link.takeError(), R->P->close()));
  Error Err = sampleWithReference(State, *R, PerSample,
                                  [&] { return timeRaw(**Link, R->C.front()->payload()); });
  if (!Err)
    Err = checkSpread(*R->P, N);
  if ((Err = joinErrors(std::move(Err), R->P->close())))
    return fail(State, std::move(Err));
  double Moved = 2.0 * double(BulkBytes);
  double Aggregate = double(PerSample) * Moved / median(R->Samples) / 1e9;
  double Raw = Moved / median(R->Others) / 1e9;
  auto &C = State.counters;
  C["aggregate_GBps"] = Aggregate;
  C["raw_GBps"] = Raw;
  C["raw_us"] = median(R->Others) * 1e6;
  C["ratio_to_links"] = Aggregate / (N * Raw);
  C["sample_us"] = median(R->Samples) * 1e6;
  reportCommon(State, *R, N, Depth, PerSample, BulkBytes);
}

} // namespace

void registerPoolBenchmarks(BenchEnv &Env) {
  for (unsigned N : PoolWidths) {
    std::string Members = std::to_string(N) + "members";
    for (unsigned D : TinyDepths)
      benchmark::RegisterBenchmark(("pool/tiny/" + Members + "/depth" + std::to_string(D)).c_str(),
                                   [&Env, N, D](benchmark::State &S) { runTiny(S, Env, N, D); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(TinyIterations);
    benchmark::RegisterBenchmark(
        ("pool/sweep/" + Members + "/depth" + std::to_string(SweepDepth)).c_str(),
        [&Env, N](benchmark::State &S) { runSweep(S, Env, N); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(TinyIterations);
    benchmark::RegisterBenchmark(("pool/16MiB/" + Members).c_str(),
                                 [&Env, N](benchmark::State &S) { runBulk(S, Env, N); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(BulkIterations);
  }
}

} // namespace catalyst::remote::bench
