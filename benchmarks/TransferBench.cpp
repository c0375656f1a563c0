//===- TransferBench.cpp - Launches per strategy and shape, against TCP ---===//
//
// Each launch benchmark launches the forward kernel (its inputs handed back
// as its outputs, no work: kernels/forward.c) through one transfer
// strategy, and in the same iteration runs one raw TCP exchange of the same
// size with a peer process. The two alternate in which goes first, so both
// see the same load on a shared machine, and the medians of both are
// reported side by side. A launch over the local transport (local, a
// zero-copy session with payloads in shared memory) has three references, all
// taking turns with it: the raw TCP exchange, the same over a Unix socket,
// and the memory-copy limit (the payload copied once each way into warm
// buffers); below 1MiB its ping-pongs carry the payload itself, since a
// plan alone crosses its socket.
//
// The matrix, named launch/<strategy>/<size>/<N>in/rank<R>[/strided]:
//   strategy  naive, batched, zerocopy (over TCP), local (zero-copy over
//             the local transport; skipped with a message where the executor offers none)
//   size      bytes per direction: 8B 4KiB 64KiB 1MiB 16MiB 256MiB 1GiB
//             (1GiB, and any size, skipped with a message when MemAvailable
//             is short of what the launch and its raw exchange hold)
//   N         1, 4, 16 or 64 rank-1 inputs splitting those bytes (8B: 1, 4)
//   rank3/strided  one input, a transposed rank-3 f64 view (4KiB and up)
//   rank1/into  one input, its output received into a buffer the caller
//            lends again and again (LaunchCall::Into), from 1MiB up: what
//            the fresh output buffer of the plain case costs
// Google Benchmark appends /iterations:<n>/manual_time to every name, so
// the regexes below end a name with /iterations, or with / to take the
// names that go on. Next to them:
//   raw/fresh_output/<size>  the raw stream into a fresh buffer per reply
//   kernel/scale/<size>/<tcp|local>  (KernelBench.cpp)
//   fanout/zerocopy/<size>/<K>exec  (FanoutBench.cpp)
//   memory/...  (MemoryBench.cpp)
//   auth/open, auth/launch/8B, liveness/launch/8B  (AuthBench.cpp)
//   wire/zerocopy/<size>, wire/open, wire/openssl/aes-128-gcm/16KiB
//            (WireBench.cpp)
//   trace/launch/8B/<strategy>  (TraceBench.cpp)
//   pack/transposed/<size>  (PackBench.cpp)
//   pool/tiny/<N>members/depth<D>, pool/sweep/<N>members/depth8,
//            pool/16MiB/<N>members  (PoolBench.cpp)
//   resident/sweep/<size>/<tcp|local>, resident/chain/64MiB/<tcp|local>
//            (ResidentBench.cpp)
//
// Presets, for --benchmark_filter (catalyst-remote-bench --list-presets
// prints them; --quick, --same-host and --full select them, and without a
// filter the default one runs). Times measured on 2 cores, loopback, split
// pinning:
//   quick    (30-45 s)  every TCP strategy at 8B, 1MiB and 16MiB, at 64KiB
//            with 16 inputs and with the strided view; zerocopy 16MiB with
//            64 inputs, strided and into a lent buffer, zerocopy 256MiB;
//            local at 8B, 16MiB and 256MiB; fan-out at 1MiB; the executor's
//            RSS over 1000 launches; what authentication, TLS and traces
//            cost; pools of 1, 2 and 4 members, tiny at depth 8 and 16MiB
//     ^(launch/(naive|batched|zerocopy)/(8B|1MiB|16MiB)/1in/rank1|launch/(naive|batched|zerocopy)/64KiB/(16in/rank1|1in/rank3/strided)|launch/zerocopy/16MiB/(64in/rank1|1in/rank3/strided|1in/rank1/into)|launch/zerocopy/256MiB/1in/rank1|launch/local/(8B|16MiB|256MiB)/1in/rank1|fanout/zerocopy/1MiB/[124]exec|memory/executor_rss/zerocopy_scale_1MiB|auth/open|auth/launch/8B|liveness/launch/8B|trace/launch/8B/zerocopy|wire/zerocopy/(8B|1MiB|256MiB)|wire/open|wire/openssl/aes-128-gcm/16KiB|pool/tiny/[124]members/depth8|pool/16MiB/[124]members)/iterations
//   default  (2.5-3.5 min)  everything over TCP up to 256MiB, naive capped
//            at 16MiB, fan-out at 1MiB and 64MiB, the raw, memory, gRPC,
//            authentication, TLS and trace benchmarks, the scale kernel at
//            256MiB over TCP against its direct run, the pools as in quick,
//            pools sweeping a broadcast resident, the sweep on a 256MiB
//            resident and the kept chain over TCP
//     ^(launch/(batched|zerocopy)/(8B|4KiB|64KiB|1MiB|16MiB|256MiB)/|launch/naive/(8B|4KiB|64KiB|1MiB|16MiB)/|raw/fresh_output/|fanout/zerocopy/(1MiB|64MiB)/|memory/|grpc/|auth/|liveness/|trace/|wire/|kernel/scale/256MiB/tcp/|pool/(tiny|sweep)/[0-9]+members/depth8/|pool/16MiB/|resident/(sweep/256MiB|chain/64MiB)/tcp/)
//   same-host  (about 1 min)  local, every shape up to 256MiB, with its
//            three references, the scale kernel at 256MiB over the
//            local transport against its direct run (tools/bench's same-host link),
//            the packer on the transposed view against a memcpy, and the
//            resident sweep and chain over the local transport
//     ^(launch/local/(8B|4KiB|64KiB|1MiB|16MiB|256MiB)/|kernel/scale/256MiB/local/|pack/|resident/(sweep/256MiB|chain/64MiB)/local/)
//   full     (about 20 min, estimated from its parts)  every benchmark
//            registered: naive at 256MiB, 1GiB, fan-out at 16MiB and 256MiB,
//            pools at depth 1
//     .
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "LaunchCase.h"
#include "copy/BulkCopy.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

constexpr Preset Presets[] = {
    {"quick", "^(launch/(naive|batched|zerocopy)/(8B|1MiB|16MiB)/1in/rank1|"
              "launch/(naive|batched|zerocopy)/64KiB/(16in/rank1|1in/rank3/strided)|"
              "launch/zerocopy/16MiB/(64in/rank1|1in/rank3/strided|1in/rank1/into)|"
              "launch/zerocopy/256MiB/1in/rank1|launch/local/(8B|16MiB|256MiB)/1in/rank1|"
              "fanout/zerocopy/1MiB/[124]exec|memory/executor_rss/zerocopy_scale_1MiB|auth/open|"
              "auth/launch/8B|liveness/launch/8B|trace/launch/8B/zerocopy|"
              "wire/zerocopy/(8B|1MiB|256MiB)|wire/open|wire/openssl/aes-128-gcm/16KiB|"
              "pool/tiny/[124]members/depth8|pool/16MiB/[124]members)/iterations"},
    {"default", "^(launch/(batched|zerocopy)/(8B|4KiB|64KiB|1MiB|16MiB|256MiB)/|launch/naive/"
                "(8B|4KiB|64KiB|1MiB|16MiB)/|raw/fresh_output/|fanout/zerocopy/(1MiB|64MiB)/|"
                "memory/|grpc/|auth/|liveness/|trace/|wire/|kernel/scale/256MiB/tcp/|"
                "pool/(tiny|sweep)/[0-9]+members/depth8/|pool/16MiB/|resident/(sweep/256MiB|chain/"
                "64MiB)/tcp/)"},
    {"same-host",
     "^(launch/local/(8B|4KiB|64KiB|1MiB|16MiB|256MiB)/|kernel/scale/256MiB/local/|pack/|"
     "resident/(sweep/256MiB|chain/64MiB)/local/)"},
    {"full", "."},
};

// Iterations are fixed: the default set must stay within a few minutes on
// two cores, and the large sizes, dominated by bandwidth, need few samples.
struct SizeCase {
  const char *Label;
  uint64_t Bytes; // per direction
  int64_t Iterations;
};
constexpr SizeCase Sizes[] = {{"8B", 8, 1000},    {"4KiB", 4 * KiB, 1000}, {"64KiB", 64 * KiB, 300},
                              {"1MiB", MiB, 100}, {"16MiB", 16 * MiB, 15}, {"256MiB", 256 * MiB, 7},
                              {"1GiB", GiB, 3}};

constexpr unsigned InputCounts[] = {1, 4, 16, 64};

// Fewer samples where one launch is slow, so that each benchmark takes a
// few seconds at most below 256MiB. Naive and batched move every byte
// through several user-space copies on both sides; at 256MiB one of their
// launches takes seconds. Naive makes five round trips per input, so its
// launch time grows with the input count.
int64_t iterationsFor(Strategy S, const SizeCase &Size, const CaseShape &Shape) {
  int64_t N = Size.Iterations;
  if (S != Strategy::ZeroCopy && Size.Bytes > 16 * MiB)
    N = 3;
  if (S == Strategy::Naive)
    N /= Shape.Inputs;
  return std::max<int64_t>(N, 3);
}

// Below this a launch is bound by latency and the reference is one
// ping-pong carrying the launch's own request and reply byte counts (its
// framing included); from it on by bandwidth, and the reference is the
// payload itself sent and echoed back.
constexpr uint64_t BulkBytes = MiB;

// The memory-copy limit of a launch on one machine: its payload copied
// once each way, into buffers touched before (a warm shared slab, and the
// caller's lent buffer), with the copy launches make (copy::copyBulk, from
// 2 MiB on faster here than the C library's memcpy).
class CopyLimit {
public:
  explicit CopyLimit(uint64_t Bytes) : Slab(std::max<uint64_t>(Bytes, 1), 1), Out(Slab) {}
  double time(const char *Payload) {
    auto Start = Clock::now();
    copy::copyBulk(Slab.data(), Payload, Slab.size());
    benchmark::ClobberMemory();
    copy::copyBulk(Out.data(), Slab.data(), Out.size());
    benchmark::ClobberMemory();
    return secondsSince(Start);
  }

private:
  std::vector<char> Slab, Out;
};

// What each iteration times beside the launch: the raw TCP exchange of
// the same bytes, and for a launch in shared memory the same over a Unix
// socket and the memory-copy limit.
struct References {
  RawLink *Tcp;
  const char *Out; // what the raw exchanges send
  RawLink *Unix = nullptr;
  CopyLimit *Copy = nullptr;
  const char *Payload = nullptr; // what the copies copy
};

struct Samples {
  std::vector<double> Launch, Raw, Unix, Copy; // seconds
  std::vector<PhaseTimes> Phases;
};

// Exact per-launch counts; the same for every launch of one case.
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
  C["outputs_ready"] = double(L.OutputsReady);
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
  if (S.Unix.empty())
    return;
  double Unix = median(S.Unix), Copy = median(S.Copy);
  C["unix_us"] = Unix * 1e6;
  C["memcpy_us"] = Copy * 1e6;
  C["ratio_to_unix"] = Launch / Unix;
  C["ratio_to_memcpy"] = Launch / Copy;
}

// What was launched, so a reader of the JSON need not parse names.
void reportShape(benchmark::State &State, const CaseShape &Shape) {
  auto &C = State.counters;
  C["payload_bytes"] = double(Shape.Bytes);
  C["inputs"] = double(Shape.Inputs);
  C["rank"] = double(Shape.rank());
  C["strided"] = Shape.Strided ? 1 : 0;
  C["into"] = Shape.Into ? 1 : 0;
}

// One iteration: a launch and each reference, in turn from the First-th.
Error sampleOnce(Session &S, LaunchCase &L, const References &R, size_t First, Samples &Out) {
  size_t Count = R.Unix ? 4 : 2;
  std::vector<double> *Into[] = {&Out.Launch, &Out.Raw, &Out.Unix, &Out.Copy};
  for (size_t Turn = 0; Turn < Count; ++Turn) {
    size_t Which = (First + Turn) % Count;
    Expected<double> T = Which == 0   ? L.run(S, /*Everything=*/false)
                         : Which == 1 ? timeRaw(*R.Tcp, R.Out)
                         : Which == 2 ? timeRaw(*R.Unix, R.Out)
                                      : Expected<double>(R.Copy->time(R.Payload));
    if (!T)
      return T.takeError();
    Into[Which]->push_back(*T);
    if (Which == 0)
      Out.Phases.push_back(S.stats().Last.Phases);
  }
  return Error::success();
}

// Untimed: the first launch of an entry also resolves its symbol and may
// reserve a slab; below BulkBytes a second one tells how many bytes a warm
// launch puts on the wire, for the ping-pong. The first checks every byte.
Error warmUp(Session &S, LaunchCase &L) {
  int Launches = L.shape().Bytes >= BulkBytes ? 1 : 2;
  for (int I = 0; I < Launches; ++I)
    if (auto Warm = L.run(S, /*Everything=*/I == 0); !Warm)
      return Warm.takeError();
  return Error::success();
}

// Launches and references, taking turns at going first.
Error sampleAll(benchmark::State &State, Session &S, LaunchCase &L, const References &R,
                Samples &Taken) {
  size_t First = 0;
  for (auto _ : State) {
    if (auto Err = sampleOnce(S, L, R, First++, Taken))
      return Err;
    State.SetIterationTime(Taken.Launch.back());
  }
  return Error::success();
}

// A launch row: a strategy over TCP, or zero-copy in shared memory (Shared).
struct Row {
  Strategy Strat;
  bool Shared = false;

  const char *name() const { return Shared ? "local" : strategyName(Strat); }
};

// What a launch and its references hold at once, in payload sizes: the
// input, the fresh output, the links' reply buffers, the peers' buffers and
// the executor's copy; naive and batched add serialized messages on both
// sides, shared memory its slab, output area and the copy limit's buffers.
uint64_t memoryNeeded(const Row &R, uint64_t Bytes) {
  return (R.Shared ? 10 : R.Strat == Strategy::ZeroCopy ? 6 : 10) * Bytes;
}

// The session a row launches through, or why there is none.
Expected<Session &> sessionFor(BenchEnv &Env, const Row &R) {
  if (!R.Shared)
    return *Env.Sessions.at(R.Strat);
  if (!Env.Shared)
    return createStringError(inconvertibleErrorCode(), "skipped: no shared memory here: %s",
                             Env.NoShared.c_str());
  return *Env.Shared;
}

// A raw link on Peer for a row's bytes: its own request and reply sizes
// below BulkBytes over TCP; in shared memory, where nothing but a plan
// crosses the socket, the payload itself.
Expected<std::unique_ptr<RawLink>> referenceLink(RawPeer &Peer, const Row &R, uint64_t Bytes,
                                                 const LaunchStats &Warm) {
  if (Bytes >= BulkBytes || R.Shared)
    return Peer.connect(std::max<uint64_t>(Bytes, 1), std::max<uint64_t>(Bytes, 1));
  return Peer.connect(Warm.BytesSent, Warm.BytesReceived);
}

void runLaunch(benchmark::State &State, BenchEnv &Env, const Row &R, const CaseShape &Shape) {
  bool Bulk = Shape.Bytes >= BulkBytes;
  if (skipUnlessMemory(State, memoryNeeded(R, Shape.Bytes),
                       std::string("this ") + R.name() + " launch and its references"))
    return;
  auto S = sessionFor(Env, R);
  if (!S)
    return skip(State, toString(S.takeError()));
  LaunchCase L(Shape);
  if (auto Err = warmUp(*S, L))
    return fail(State, std::move(Err));
  auto Link = referenceLink(*Env.Peer, R, Shape.Bytes, S->stats().Last);
  if (!Link)
    return fail(State, Link.takeError());
  // The stream sends the launch's own payload; a ping-pong's request may be
  // longer than that, so it gets a buffer of its own.
  std::vector<char> PingPongOut(Bulk ? 0 : (*Link)->request(), 'x');
  References Refs{Link->get(), Bulk ? L.payload() : PingPongOut.data()};
  std::unique_ptr<RawLink> Unix;
  std::unique_ptr<CopyLimit> Copy;
  if (R.Shared) {
    auto U = referenceLink(*Env.LocalPeer, R, Shape.Bytes, S->stats().Last);
    if (!U)
      return fail(State, U.takeError());
    Unix = std::move(*U);
    Copy = std::make_unique<CopyLimit>(Shape.Bytes);
    Refs.Unix = Unix.get();
    Refs.Copy = Copy.get();
    Refs.Payload = L.payload();
  }
  Samples Taken;
  // One untimed turn of each, so that every buffer is warm.
  if (auto Err = sampleOnce(*S, L, Refs, 0, Taken))
    return fail(State, std::move(Err));
  Taken = Samples();
  if (auto Err = sampleAll(State, *S, L, Refs, Taken))
    return fail(State, std::move(Err));
  State.SetLabel(Bulk ? "raw=stream" : "raw=pingpong");
  reportTimes(State, Taken, Shape.Bytes, **Link);
  reportCounts(State, S->stats().Last);
  reportPhases(State, Taken.Phases);
  reportShape(State, Shape);
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

// The shapes measured at one size: the payload split among 1 to 64 rank-1
// inputs while it divides evenly, and the transposed rank-3 view from 8
// elements on (below that there is nothing to transpose).
std::vector<CaseShape> shapesFor(uint64_t Bytes) {
  std::vector<CaseShape> Shapes;
  for (unsigned N : InputCounts)
    if (Bytes % N == 0)
      Shapes.push_back({Bytes, N, false});
  if (Bytes >= 8 * 8)
    Shapes.push_back({Bytes, 1, true});
  if (Bytes >= BulkBytes)
    Shapes.push_back({Bytes, 1, false, /*Into=*/true});
  return Shapes;
}

std::string launchName(const Row &R, const SizeCase &Size, const CaseShape &Shape) {
  return std::string("launch/") + R.name() + "/" + Size.Label + "/" + std::to_string(Shape.Inputs) +
         "in/rank" + std::to_string(Shape.rank()) + (Shape.Strided ? "/strided" : "") +
         (Shape.Into ? "/into" : "");
}

void registerLaunch(BenchEnv &Env, const Row &R, const SizeCase &Size, const CaseShape &Shape) {
  benchmark::RegisterBenchmark(
      launchName(R, Size, Shape).c_str(),
      [&Env, R, Shape](benchmark::State &S) { runLaunch(S, Env, R, Shape); })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(iterationsFor(R.Strat, Size, Shape));
}

double medianUs(const std::vector<PhaseTimes> &All, uint64_t PhaseTimes::*Field) {
  std::vector<double> Us;
  for (const PhaseTimes &P : All)
    Us.push_back(double(P.*Field) / 1e3);
  return median(std::move(Us));
}

} // namespace

Expected<double> timeRaw(RawLink &Link, const char *Out) {
  auto Start = Clock::now();
  if (auto Err = Link.exchange(Out))
    return Err;
  return secondsSince(Start);
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

// Sizes outermost: the strategies at one size and shape run close together
// in time, under much the same load. The fresh-output baseline stops at
// 256MiB, where the launches it explains are measured by default.
void registerTransferBenchmarks(BenchEnv &Env) {
  for (const SizeCase &Size : Sizes)
    for (const CaseShape &Shape : shapesFor(Size.Bytes)) {
      for (Strategy Strat : Strategies)
        registerLaunch(Env, {Strat}, Size, Shape);
      registerLaunch(Env, {Strategy::ZeroCopy, /*Shared=*/true}, Size, Shape);
    }
  for (const SizeCase &Size : Sizes) {
    if (Size.Bytes < BulkBytes || Size.Bytes > 256 * MiB)
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

ArrayRef<Preset> presets() {
  return Presets;
}

const Preset &defaultPreset() {
  return Presets[1];
}

void printPresets(raw_ostream &OS) {
  for (const Preset &P : Presets)
    OS << P.Name << " " << P.Filter << "\n";
}

} // namespace catalyst::remote::bench
