//===- ResidentBench.cpp - What residents spare a sweep and a chain -------===//
//
// Sweep: a constant of SIZE bytes and an 8-byte parameter, launched again
// and again, as a variational sweep runs. sweep.o hands the parameter back
// and reads nothing of the constant, so a launch costs what reaching the
// constant costs. Three launches, all on one zero-copy session: the 8 B
// launch alone (identity.o), the sweep with the constant a resident
// (uploaded once, untimed), and the sweep sending it every time. The first
// two take turns, 1,000 each; the third runs 5 times.
//
//   resident/sweep/SIZE/TRANSPORT
//     tiny_us, resident_us, sent_us   medians
//     ratio_to_tiny      resident_us / tiny_us (the target: 1.2 at most)
//     sent_to_resident   sent_us / resident_us: what the resident spares
//     resident_sent_B    bytes one resident launch sent
//     upload_ms          the one upload
//
// Chain: scale.o 16 times on a 64 MiB f64 tensor, each launch reading the
// output the last one kept, only the last fetched (into a buffer reused
// from run to run); beside it, the same chain with every output brought
// back and sent again. The chain starts from an upload, untimed.
//
//   resident/chain/64MiB/TRANSPORT (manual time: the kept chain)
//     chain_ms        the 16 launches and the fetch, median over runs
//     kernel_ms       the kernels' own time in them (LaunchStats phases)
//     fetch_ms        one fetch of the 64 MiB result, alone
//     ratio_to_floor  chain_ms / (kernel_ms + fetch_ms) (the target: 1.1)
//     roundtrip_ms, roundtrip_to_chain   the chain that brings each back
//
// TRANSPORT is tcp (the session's TCP connection; on a netlab link, that
// link) or local (the executor's local socket and shared memory).
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"

#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

struct Over {
  TransportKind Kind;
  const char *Name;
};
constexpr Over Transports[] = {{TransportKind::Tcp, "tcp"}, {TransportKind::Local, "local"}};

constexpr unsigned SweepLaunches = 1000; // of each of the tiny and the resident launch
constexpr unsigned SentLaunches = 5;
constexpr unsigned ChainSteps = 16;
constexpr uint64_t ChainBytes = 64 * MiB;

Error wrong(const char *What) {
  return createStringError(inconvertibleErrorCode(), "%s", What);
}

Error measureSweep(benchmark::State &State, Session &S, uint64_t Bytes) {
  std::vector<char> Constant(Bytes);
  for (uint64_t I = 0; I < Bytes; I += 4096)
    Constant[I] = char(I >> 12);
  int64_t Param = 0;
  MemrefR1 C{Constant.data(), Constant.data(), 0, {int64_t(Bytes)}, {1}};
  MemrefR1 P{&Param, &Param, 0, {1}, {1}};
  MemrefR1 Out{};
  auto Began = Clock::now();
  auto R = S.upload({&C, 1, 1});
  if (!R)
    return R.takeError();
  double UploadS = secondsSince(Began);
  MemrefArg TinyIn[] = {{&P, 1, 8}};
  MemrefArg ResidentIn[] = {MemrefArg::of(*R), {&P, 1, 8}};
  MemrefArg SentIn[] = {{&C, 1, 1}, {&P, 1, 8}};
  MemrefArg Outs[] = {{&Out, 1, 8}};
  LaunchCall Tiny{"identity", IdentityKernel, TinyIn, Outs};
  LaunchCall Resident{"sweep", SweepKernel, ResidentIn, Outs};
  LaunchCall Sent{"sweep", SweepKernel, SentIn, Outs};
  std::vector<double> TinyT, ResidentT, SentT;
  uint64_t ResidentSent = 0;
  auto Run = [&](const LaunchCall &Call, std::vector<double> *Into) -> Error {
    ++Param;
    auto T = Clock::now();
    if (Error Err = S.launch(Call))
      return Err;
    double Seconds = secondsSince(T);
    if (Error Err = takeParameter(Out, Param))
      return Err;
    if (Into)
      Into->push_back(Seconds);
    return Error::success();
  };
  // First launches untimed: the entries' lookups, buffers touched first.
  for (const LaunchCall *Call : {&Tiny, &Resident, &Sent})
    if (Error Err = Run(*Call, nullptr))
      return Err;
  for (auto _ : State) {
    for (unsigned I = 0; I < SweepLaunches; ++I) {
      // Taking turns at going first, so that neither always follows the other.
      bool TinyFirst = I % 2 == 0;
      if (Error Err = Run(TinyFirst ? Tiny : Resident, TinyFirst ? &TinyT : &ResidentT))
        return Err;
      if (Error Err = Run(TinyFirst ? Resident : Tiny, TinyFirst ? &ResidentT : &TinyT))
        return Err;
      if (!TinyFirst)
        ResidentSent = S.stats().Last.BytesSent; // the resident launch's, just made
    }
    for (unsigned I = 0; I < SentLaunches; ++I)
      if (Error Err = Run(Sent, &SentT))
        return Err;
    State.SetIterationTime(median(ResidentT));
  }
  double TinyUs = median(TinyT) * 1e6, ResidentUs = median(ResidentT) * 1e6,
         SentUs = median(SentT) * 1e6;
  State.counters["tiny_us"] = TinyUs;
  State.counters["resident_us"] = ResidentUs;
  State.counters["sent_us"] = SentUs;
  State.counters["ratio_to_tiny"] = ResidentUs / TinyUs;
  State.counters["sent_to_resident"] = SentUs / ResidentUs;
  State.counters["resident_sent_B"] = double(ResidentSent);
  State.counters["upload_ms"] = UploadS * 1e3;
  return S.release(*R);
}

// Whether V holds 2^Steps times the chain's input, 1 + I % 4096, at both
// ends and in the middle.
bool chainedRight(const double *V, size_t N) {
  double Factor = double(uint64_t(1) << ChainSteps);
  for (size_t I : {size_t(0), N / 2, N - 1})
    if (V[I] != Factor * double(1 + I % 4096))
      return false;
  return true;
}

Error measureChain(benchmark::State &State, Session &S) {
  size_t N = ChainBytes / sizeof(double);
  std::vector<double> X(N), Back(N);
  for (size_t I = 0; I < N; ++I)
    X[I] = double(1 + I % 4096);
  MemrefR1 XD{X.data(), X.data(), 0, {int64_t(N)}, {1}};
  auto Start = S.upload({&XD, 1, 8});
  if (!Start)
    return Start.takeError();
  MutableArrayRef<char> Lent(reinterpret_cast<char *>(Back.data()), ChainBytes);
  std::vector<double> ChainT, KernelT, FetchT, TripT;
  for (auto _ : State) {
    std::vector<Resident> Made(ChainSteps);
    double KernelS = 0;
    auto Began = Clock::now();
    const Resident *Prev = &*Start;
    for (unsigned K = 0; K < ChainSteps; ++K) {
      MemrefR1 Out{};
      MemrefArg In[] = {MemrefArg::of(*Prev)};
      MemrefArg Outs[] = {{&Out, 1, 8}};
      Resident *Keep[] = {&Made[K]};
      if (Error Err = S.launch({"scale", ScaleKernel, In, Outs, {}, Keep}))
        return Err;
      KernelS += double(S.stats().Last.Phases.KernelNs) * 1e-9;
      // As a pipeline that wants only the last result would: the one
      // before goes, and its memory serves the next kernel's output.
      if (K > 0)
        if (Error Err = S.release(Made[K - 1]))
          return Err;
      Prev = &Made[K];
    }
    MemrefR1 Final{};
    if (Error Err = S.fetch(*Prev, {&Final, 1, 8}, Lent))
      return Err;
    double ChainS = secondsSince(Began);
    if (Final.Aligned != Back.data() || !chainedRight(Back.data(), N))
      return wrong("the kept chain's result is wrong, or not in the buffer lent for it");
    // The one transfer the chain cannot avoid, alone.
    auto Fetched = Clock::now();
    if (Error Err = S.fetch(*Prev, {&Final, 1, 8}, Lent))
      return Err;
    double FetchS = secondsSince(Fetched);
    if (Error Err = S.release(Made.back()))
      return Err;
    // Every output brought back and sent again.
    auto Tripped = Clock::now();
    MemrefR1 In = XD;
    void *Owned = nullptr;
    for (unsigned K = 0; K < ChainSteps; ++K) {
      MemrefR1 Out{};
      if (Error Err =
              launchR1(S, "scale", ScaleKernel, static_cast<double *>(In.Aligned) + In.Offset,
                       In.Sizes[0], 8, Out)) {
        std::free(Owned);
        return Err;
      }
      std::free(Owned);
      Owned = Out.Allocated;
      In = Out;
    }
    double TripS = secondsSince(Tripped);
    bool Right = chainedRight(static_cast<const double *>(In.Aligned) + In.Offset, N);
    std::free(Owned);
    if (!Right)
      return wrong("the round-tripped chain's result is wrong");
    ChainT.push_back(ChainS);
    KernelT.push_back(KernelS);
    FetchT.push_back(FetchS);
    TripT.push_back(TripS);
    State.SetIterationTime(ChainS);
  }
  double Chain = median(ChainT), Kernel = median(KernelT), Fetch = median(FetchT),
         Trip = median(TripT);
  State.counters["chain_ms"] = Chain * 1e3;
  State.counters["kernel_ms"] = Kernel * 1e3;
  State.counters["fetch_ms"] = Fetch * 1e3;
  State.counters["ratio_to_floor"] = Chain / (Kernel + Fetch);
  State.counters["roundtrip_ms"] = Trip * 1e3;
  State.counters["roundtrip_to_chain"] = Trip / Chain;
  return S.release(*Start);
}

// Runs Measure on a zero-copy session of its own over T, with the kernels
// linked; skipped where T is the local transport and there is none.
template <typename Fn>
void onSession(benchmark::State &State, BenchEnv &Env, const Over &T, Fn Measure) {
  auto S = openSession(Env.Address, Strategy::ZeroCopy, {IdentityKernel, SweepKernel, ScaleKernel},
                       T.Kind);
  if (!S && T.Kind == TransportKind::Local)
    return skip(State, "skipped: no shared memory here: " + toString(S.takeError()));
  if (!S)
    return fail(State, S.takeError());
  Error Err = Measure(**S);
  Err = joinErrors(std::move(Err), (*S)->close());
  if (Err)
    return fail(State, std::move(Err));
}

} // namespace

// Checks that Out holds Want alone, the parameter a launch was given, and
// frees it.
Error takeParameter(MemrefR1 &Out, int64_t Want) {
  int64_t Got = 0;
  bool Shaped = Out.Sizes[0] == 1 && Out.Aligned;
  if (Shaped)
    std::memcpy(&Got, static_cast<char *>(Out.Aligned) + Out.Offset * 8, 8);
  std::free(Out.Allocated);
  Out = {};
  if (!Shaped || Got != Want)
    return wrong("a launch did not hand its parameter back");
  return Error::success();
}

void registerResidentBenchmarks(BenchEnv &Env) {
  for (const Over &T : Transports) {
    for (uint64_t Bytes : {64 * MiB, 256 * MiB}) {
      std::string Size = std::to_string(Bytes / MiB) + "MiB";
      benchmark::RegisterBenchmark(
          ("resident/sweep/" + Size + "/" + T.Name).c_str(),
          [&Env, T, Bytes, Size](benchmark::State &State) {
            if (skipUnlessMemory(State, 4 * Bytes, "the sweep on a " + Size + " constant"))
              return;
            onSession(State, Env, T, [&](Session &S) { return measureSweep(State, S, Bytes); });
          })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(1);
    }
    benchmark::RegisterBenchmark(
        (std::string("resident/chain/64MiB/") + T.Name).c_str(),
        [&Env, T](benchmark::State &State) {
          if (skipUnlessMemory(State, 8 * ChainBytes, "the chain on 64 MiB"))
            return;
          onSession(State, Env, T, [&](Session &S) { return measureChain(State, S); });
        })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
  }
}

} // namespace catalyst::remote::bench
