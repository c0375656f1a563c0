//===- FanoutBench.cpp - One host keeping several executors busy ----------===//
//
// fanout/zerocopy/<size>/<K>exec: K executors, one zerocopy session each,
// each sent one forward launch of <size> per direction. Each iteration
// times the K launches overlapped (Session::launchAsync on every session,
// then await on every ticket) and the same K launches one after another,
// alternating which goes first, as the launch benchmarks alternate with
// their raw exchange. Reported, as medians:
//   launch_us        one overlapped batch, from the first launchAsync to the
//                    last await: the time each launch of it took, as its
//                    caller sees it
//   aggregate_GBps   both directions of all K launches over launch_us
//   serial_us        the same K launches one after another
//   overlap_speedup  serial_us / launch_us
//   send_us, receive_us  the phases of the overlapped launches (Stats.h):
//                    which side of a launch waits when several are in flight
// The executors are the first K of CATALYST_REMOTE_ADDRESS when it lists
// that many, else K started on loopback (label executors=local). On one
// machine the executors share the CPUs the pinning gives them, so the
// speedup there says what overlapping hides (waits), not how far K
// machines would scale.
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "LaunchCase.h"

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

struct FanoutSize {
  const char *Label;
  uint64_t Bytes; // per launch, per direction
  int64_t Iterations;
};
constexpr FanoutSize FanoutSizes[] = {
    {"1MiB", MiB, 50}, {"16MiB", 16 * MiB, 10}, {"64MiB", 64 * MiB, 9}, {"256MiB", 256 * MiB, 3}};
constexpr unsigned Widths[] = {1, 2, 4};

// One session per executor and the case each launches; sessions close
// before their cases go, as a launch in flight points into its case.
struct Fleet {
  std::vector<std::unique_ptr<LaunchCase>> Cases;
  std::vector<std::unique_ptr<Session>> Sessions;

  Error close() {
    Error Err = Error::success();
    for (auto &S : Sessions)
      Err = joinErrors(std::move(Err), S->close());
    return Err;
  }
};

// Every session is warmed and its outputs checked in full once.
Expected<Fleet> openFleet(ArrayRef<std::string> Addresses, uint64_t Bytes) {
  Fleet F;
  for (const std::string &Address : Addresses) {
    auto S = openSession(Address, Strategy::ZeroCopy, {ForwardKernel});
    if (!S)
      return S.takeError();
    F.Sessions.push_back(std::move(*S));
    F.Cases.push_back(std::make_unique<LaunchCase>(CaseShape{Bytes, 1, false}));
    if (auto Warm = F.Cases.back()->run(*F.Sessions.back(), /*Everything=*/true); !Warm)
      return Warm.takeError();
  }
  return F;
}

// All K in flight at once; checks and frees the outputs after the time.
Expected<double> overlapped(Fleet &F) {
  std::vector<uint64_t> Tickets;
  auto Start = Clock::now();
  for (size_t K = 0; K < F.Sessions.size(); ++K)
    Tickets.push_back(F.Sessions[K]->launchAsync(F.Cases[K]->call()));
  Error Err = Error::success();
  for (size_t K = 0; K < F.Sessions.size(); ++K)
    Err = joinErrors(std::move(Err), F.Sessions[K]->await(Tickets[K]));
  double Seconds = secondsSince(Start);
  if (Err)
    return Err;
  for (auto &C : F.Cases)
    if (auto Bad = C->finish(/*Everything=*/false))
      return Bad;
  return Seconds;
}

Expected<double> serial(Fleet &F) {
  double Seconds = 0;
  for (size_t K = 0; K < F.Sessions.size(); ++K) {
    auto T = F.Cases[K]->run(*F.Sessions[K], /*Everything=*/false);
    if (!T)
      return T.takeError();
    Seconds += *T;
  }
  return Seconds;
}

struct FanoutSamples {
  std::vector<double> Overlapped, Serial; // seconds
  std::vector<PhaseTimes> Phases;         // every overlapped launch's
};

void keepPhases(const Fleet &F, FanoutSamples &Taken) {
  for (auto &S : F.Sessions)
    Taken.Phases.push_back(S->stats().Last.Phases);
}

double medianPhaseUs(const std::vector<PhaseTimes> &All, uint64_t PhaseTimes::*Field) {
  std::vector<double> Us;
  for (const PhaseTimes &P : All)
    Us.push_back(double(P.*Field) / 1e3);
  return median(std::move(Us));
}

Error sampleFanout(benchmark::State &State, Fleet &F, FanoutSamples &Taken) {
  bool OverlapFirst = true;
  for (auto _ : State) {
    for (int Turn = 0; Turn < 2; ++Turn) {
      bool Overlap = (Turn == 0) == OverlapFirst;
      auto T = Overlap ? overlapped(F) : serial(F);
      if (!T)
        return T.takeError();
      (Overlap ? Taken.Overlapped : Taken.Serial).push_back(*T);
      if (Overlap)
        keepPhases(F, Taken);
    }
    State.SetIterationTime(Taken.Overlapped.back());
    OverlapFirst = !OverlapFirst;
  }
  return Error::success();
}

// The counts are one launch's (every session's are the same).
void reportFanout(benchmark::State &State, const FanoutSamples &Taken, uint64_t Bytes,
                  const Fleet &F) {
  double Batch = median(Taken.Overlapped), Serial = median(Taken.Serial);
  double K = double(F.Sessions.size());
  auto &C = State.counters;
  C["launch_us"] = Batch * 1e6;
  C["serial_us"] = Serial * 1e6;
  C["overlap_speedup"] = Serial / Batch;
  C["aggregate_GBps"] = K * 2.0 * double(Bytes) / Batch / 1e9;
  C["GBps"] = 2.0 * double(Bytes) / Batch / 1e9;
  C["send_us"] = medianPhaseUs(Taken.Phases, &PhaseTimes::SendNs);
  C["receive_us"] = medianPhaseUs(Taken.Phases, &PhaseTimes::ReceiveNs);
  C["executors"] = K;
  C["payload_bytes"] = double(Bytes);
  LaunchStats L = F.Sessions.front()->stats().Last;
  C["round_trips"] = double(L.RoundTrips);
  C["bytes_sent"] = double(L.BytesSent);
  C["bytes_received"] = double(L.BytesReceived);
  C["host_copy_bytes"] = double(L.HostCopyBytes);
  C["executor_copy_bytes"] = double(L.ExecutorCopyBytes);
}

// Input and output of each launch, the executors' copies, with room.
constexpr uint64_t FanoutMemoryPerLaunch = 4;

void runFanout(benchmark::State &State, BenchEnv &Env, uint64_t Bytes, unsigned K) {
  if (skipUnlessMemory(State, FanoutMemoryPerLaunch * K * Bytes, "this fan-out"))
    return;
  bool Local = false;
  auto Addresses = executorsFor(Env, K, Local);
  if (!Addresses)
    return fail(State, Addresses.takeError());
  auto F = openFleet(*Addresses, Bytes);
  if (!F)
    return fail(State, F.takeError());
  FanoutSamples Taken;
  if (auto Err = sampleFanout(State, *F, Taken))
    return fail(State, joinErrors(std::move(Err), F->close()));
  State.SetLabel(Local ? "executors=local" : "executors=given");
  reportFanout(State, Taken, Bytes, *F);
  if (auto Err = F->close())
    fail(State, std::move(Err));
}

} // namespace

void registerFanoutBenchmarks(BenchEnv &Env) {
  for (const FanoutSize &Size : FanoutSizes)
    for (unsigned K : Widths) {
      std::string Name =
          std::string("fanout/zerocopy/") + Size.Label + "/" + std::to_string(K) + "exec";
      uint64_t Bytes = Size.Bytes;
      benchmark::RegisterBenchmark(
          Name.c_str(), [&Env, Bytes, K](benchmark::State &S) { runFanout(S, Env, Bytes, K); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(Size.Iterations);
    }
}

} // namespace catalyst::remote::bench
