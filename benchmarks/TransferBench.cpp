//===- TransferBench.cpp - Launch time per strategy and size, against TCP -===//
//
// Each benchmark launches the identity kernel (one input, one output of the
// same size, no work) through one transfer strategy, and in the same
// iteration runs one raw TCP exchange of the same size with a peer process.
// The two alternate in which goes first, so both see the same load on a
// shared machine, and the medians of both are reported side by side.
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

// Iterations are fixed: a default run must stay within a few minutes on two
// cores, and the large sizes, dominated by bandwidth, need few samples.
struct SizeCase {
  const char *Label;
  uint64_t Bytes; // per direction
  int64_t Iterations;
};
constexpr SizeCase Sizes[] = {{"8B", 8, 1000},          {"4KiB", 4 * KiB, 1000},
                              {"64KiB", 64 * KiB, 300}, {"1MiB", MiB, 100},
                              {"16MiB", 16 * MiB, 15},  {"256MiB", 256 * MiB, 7}};

// Naive and batched move every byte through several user-space copies on
// both sides; at 256 MiB one of their launches takes seconds, so they get
// fewer samples there.
int64_t iterationsFor(Strategy S, const SizeCase &Size) {
  if (S != Strategy::ZeroCopy && Size.Bytes > 16 * MiB)
    return 3;
  return Size.Iterations;
}

// Below this a launch is bound by latency and the reference is one
// ping-pong carrying the launch's own request and reply byte counts (its
// framing included); from it on by bandwidth, and the reference is the
// payload itself sent and echoed back.
constexpr uint64_t BulkBytes = MiB;

constexpr const char *IdentityEntry = "identity";

Error wrongOutput(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "identity returned " + What);
}

// Launches identity on one byte input of a fixed size. Every launch hands
// back a fresh host buffer, as the API does; releasing it is the caller's
// business and stays outside the time.
class IdentityLaunch {
public:
  explicit IdentityLaunch(uint64_t Bytes) : In(Bytes) {
    for (uint64_t I = 0; I < Bytes; ++I)
      In[I] = char(I * 131 + 7);
  }

  const char *input() const { return In.data(); }

  // Seconds the launch took. Checking every byte costs as much as a large
  // launch, so only the warm-up does (Everything); others check the ends.
  Expected<double> run(Session &S, bool Everything) {
    MemrefR1 OutDesc;
    auto Start = Clock::now();
    if (auto Err =
            launchR1(S, IdentityEntry, IdentityKernel, In.data(), int64_t(In.size()), 1, OutDesc))
      return Err;
    double Seconds = secondsSince(Start);
    Error Check = check(OutDesc, Everything);
    std::free(OutDesc.Allocated);
    if (Check)
      return Check;
    return Seconds;
  }

private:
  Error check(const MemrefR1 &Out, bool Everything) const {
    if (Out.Sizes[0] != int64_t(In.size()) || !Out.Aligned || Out.Strides[0] != 1)
      return wrongOutput(Twine(Out.Sizes[0]) + " bytes, expected " + Twine(In.size()));
    const char *Got = static_cast<const char *>(Out.Aligned) + Out.Offset;
    size_t Last = In.size() - 1;
    bool Same = Everything ? std::memcmp(Got, In.data(), In.size()) == 0
                           : Got[0] == In[0] && Got[Last] == In[Last];
    return Same ? Error::success() : wrongOutput("bytes that differ from its input");
  }

  std::vector<char> In;
};

Expected<double> timeRaw(RawLink &Link, const char *Out) {
  auto Start = Clock::now();
  if (auto Err = Link.exchange(Out))
    return Err;
  return secondsSince(Start);
}

struct Samples {
  std::vector<double> Launch, Raw; // seconds
  std::vector<PhaseTimes> Phases;
};

double medianUs(const std::vector<PhaseTimes> &All, uint64_t PhaseTimes::*Field) {
  std::vector<double> Us;
  for (const PhaseTimes &P : All)
    Us.push_back(double(P.*Field) / 1e3);
  return median(std::move(Us));
}

void reportPhases(benchmark::State &State, const std::vector<PhaseTimes> &All) {
  auto &C = State.counters;
  C["plan_us"] = medianUs(All, &PhaseTimes::PlanNs);
  C["send_us"] = medianUs(All, &PhaseTimes::SendNs);
  C["copy_in_us"] = medianUs(All, &PhaseTimes::CopyInNs);
  C["kernel_us"] = medianUs(All, &PhaseTimes::KernelNs);
  C["copy_out_us"] = medianUs(All, &PhaseTimes::CopyOutNs);
  C["receive_us"] = medianUs(All, &PhaseTimes::ReceiveNs);
  C["rewrite_us"] = medianUs(All, &PhaseTimes::RewriteNs);
}

// Exact per-launch counts; the same for every launch of one size.
void reportCounts(benchmark::State &State, const LaunchStats &L) {
  auto &C = State.counters;
  C["round_trips"] = double(L.RoundTrips);
  C["messages"] = double(L.Messages);
  C["bytes_sent"] = double(L.BytesSent);
  C["bytes_received"] = double(L.BytesReceived);
  C["host_copy_bytes"] = double(L.HostCopyBytes);
  C["executor_copy_bytes"] = double(L.ExecutorCopyBytes);
  C["slab_in_use"] = double(L.SlabInUse);
  C["slab_high_water"] = double(L.SlabHighWater);
}

// Throughput counts both directions, as both cross the link.
void reportTimes(benchmark::State &State, const Samples &S, uint64_t Bytes, const RawLink &Link) {
  double Launch = median(S.Launch), Raw = median(S.Raw);
  auto &C = State.counters;
  C["launch_us"] = Launch * 1e6;
  C["raw_us"] = Raw * 1e6;
  C["ratio_to_raw"] = Launch / Raw;
  C["GBps"] = 2.0 * double(Bytes) / Launch / 1e9;
  C["raw_GBps"] = 2.0 * double(Bytes) / Raw / 1e9;
  C["raw_request_bytes"] = double(Link.request());
  C["raw_reply_bytes"] = double(Link.reply());
}

// The raw link for Bytes, sized from what the warm-up launch put on the wire.
Expected<std::unique_ptr<RawLink>> rawLinkFor(BenchEnv &Env, uint64_t Bytes,
                                              const LaunchStats &Warm) {
  if (Bytes >= BulkBytes)
    return Env.Peer->connect(Bytes, Bytes);
  return Env.Peer->connect(Warm.BytesSent, Warm.BytesReceived);
}

// One iteration: a launch and a raw exchange, in the order given.
Error sampleOnce(Session &S, IdentityLaunch &L, RawLink &Link, const char *RawOut, bool LaunchFirst,
                 Samples &Out) {
  for (int Turn = 0; Turn < 2; ++Turn) {
    bool Launch = (Turn == 0) == LaunchFirst;
    auto T = Launch ? L.run(S, /*Everything=*/false) : timeRaw(Link, RawOut);
    if (!T)
      return T.takeError();
    (Launch ? Out.Launch : Out.Raw).push_back(*T);
    if (Launch)
      Out.Phases.push_back(S.stats().Last.Phases);
  }
  return Error::success();
}

// Untimed: the first launch of an entry also resolves its symbol and may
// reserve a slab, so the second one tells how many bytes a launch puts on
// the wire. The first checks every byte.
Error warmUp(Session &S, IdentityLaunch &L) {
  for (int I = 0; I < 2; ++I)
    if (auto Warm = L.run(S, /*Everything=*/I == 0); !Warm)
      return Warm.takeError();
  return Error::success();
}

void runLaunch(benchmark::State &State, BenchEnv &Env, Strategy Strat, uint64_t Bytes) {
  Session &S = *Env.Sessions.at(Strat);
  IdentityLaunch L(Bytes);
  if (auto Err = warmUp(S, L))
    return fail(State, std::move(Err));
  auto Link = rawLinkFor(Env, Bytes, S.stats().Last);
  if (!Link)
    return fail(State, Link.takeError());
  // The stream sends the launch's own input; a ping-pong's request may be
  // longer than that, so it gets a buffer of its own.
  std::vector<char> PingPongOut(Bytes >= BulkBytes ? 0 : (*Link)->request(), 'x');
  const char *RawOut = Bytes >= BulkBytes ? L.input() : PingPongOut.data();
  if (auto Err = (*Link)->exchange(RawOut))
    return fail(State, std::move(Err));

  Samples Taken;
  bool LaunchFirst = true;
  for (auto _ : State) {
    if (auto Err = sampleOnce(S, L, **Link, RawOut, LaunchFirst, Taken))
      return fail(State, std::move(Err));
    State.SetIterationTime(Taken.Launch.back());
    LaunchFirst = !LaunchFirst;
  }
  State.SetLabel(Bytes >= BulkBytes ? "raw=stream" : "raw=pingpong");
  reportTimes(State, Taken, Bytes, **Link);
  reportCounts(State, S.stats().Last);
  reportPhases(State, Taken.Phases);
}

// How much of a bulk launch's gap to the raw stream is the API's fresh
// output buffer alone: the same stream, its reply received once into the
// link's reused buffer and once into a buffer allocated for it, as a
// launch's output is.
Expected<double> timeFresh(RawLink &Link, const char *Out) {
  auto Start = Clock::now();
  char *Buf = static_cast<char *>(std::malloc(Link.reply()));
  if (!Buf)
    return createStringError(std::errc::not_enough_memory, "cannot allocate the reply buffer");
  Error Err = Link.exchange(Out, Buf);
  double Seconds = secondsSince(Start);
  std::free(Buf);
  if (Err)
    return Err;
  return Seconds;
}

struct FreshSamples {
  std::vector<double> Fresh, Reused; // seconds
};

Error sampleFresh(RawLink &Link, const char *Out, bool FreshFirst, FreshSamples &Taken) {
  for (int Turn = 0; Turn < 2; ++Turn) {
    bool Fresh = (Turn == 0) == FreshFirst;
    auto T = Fresh ? timeFresh(Link, Out) : timeRaw(Link, Out);
    if (!T)
      return T.takeError();
    (Fresh ? Taken.Fresh : Taken.Reused).push_back(*T);
  }
  return Error::success();
}

void runFreshOutput(benchmark::State &State, BenchEnv &Env, uint64_t Bytes) {
  std::vector<char> Out(Bytes, 'x');
  auto Link = Env.Peer->connect(Bytes, Bytes);
  if (!Link)
    return fail(State, Link.takeError());
  if (auto Err = (*Link)->exchange(Out.data()))
    return fail(State, std::move(Err));
  FreshSamples Taken;
  bool FreshFirst = true;
  for (auto _ : State) {
    if (auto Err = sampleFresh(**Link, Out.data(), FreshFirst, Taken))
      return fail(State, std::move(Err));
    State.SetIterationTime(Taken.Fresh.back());
    FreshFirst = !FreshFirst;
  }
  double Fresh = median(Taken.Fresh), Reused = median(Taken.Reused);
  State.counters["fresh_us"] = Fresh * 1e6;
  State.counters["raw_us"] = Reused * 1e6;
  State.counters["fresh_over_raw"] = Fresh / Reused;
}

} // namespace

// Sizes outermost: the three strategies at one size run close together in
// time, under much the same load.
void registerTransferBenchmarks(BenchEnv &Env) {
  for (const SizeCase &Size : Sizes)
    for (Strategy Strat : Strategies) {
      std::string Name = std::string("launch/") + strategyName(Strat) + "/" + Size.Label;
      uint64_t Bytes = Size.Bytes;
      benchmark::RegisterBenchmark(
          Name.c_str(),
          [&Env, Strat, Bytes](benchmark::State &S) { runLaunch(S, Env, Strat, Bytes); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(iterationsFor(Strat, Size));
    }
  for (const SizeCase &Size : Sizes) {
    if (Size.Bytes < BulkBytes)
      continue;
    uint64_t Bytes = Size.Bytes;
    benchmark::RegisterBenchmark(
        (std::string("raw/fresh_output/") + Size.Label).c_str(),
        [&Env, Bytes](benchmark::State &S) { runFreshOutput(S, Env, Bytes); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(Size.Iterations);
  }
}

} // namespace catalyst::remote::bench
