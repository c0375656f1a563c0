//===- KernelBench.cpp - A kernel's launches against its direct run -------===//
//
// kernel/scale/<size>/<tcp|local>: the scale kernel (kernels/scale.c: a fresh
// malloc'ed output, every input element times two) launched again and
// again, zero-copy, on one f64 input of <size>, over TCP or in shared
// memory, each output received into a fresh buffer, as a Catalyst caller
// receives it. Each row has a session of its own, so its executor process
// has run nothing else. Each iteration takes turns at three things, so all
// three see the same load on a shared machine:
//   the launch          launch_us, and its phases (Stats.h), among them the
//                       executor's kernel phase, kernel_us
//   the raw TCP echo    raw_us: the same bytes each way with the raw peer
//                       (RawPeer.h), received into the link's reused buffer
//   the direct kernel   direct_kernel_us: the same object called in a child
//                       process of the benchmark on warm memory
//                       (DirectKernel.h), direct_faults its page faults
// The two figures that say what is left to gain, from those medians:
//   kernel_over_direct           kernel_us / direct_kernel_us: what running
//                               in the executor costs the kernel itself
//                               (fresh pages for its output, its thread)
//   launch_over_raw_plus_direct  launch_us / (raw_us + direct_kernel_us): the
//                               launch against moving its bytes over TCP
//                               and computing, one after the other
// outputs_ready: the share of launches whose output the host had prepared
// while the launch ran (LaunchStats::OutputsReady).
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "DirectKernel.h"

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

struct KernelSize {
  const char *Label;
  uint64_t Bytes; // per direction
  int64_t Iterations;
};
// A 256 MiB launch takes 0.3-0.7 s, and each iteration adds the echo and
// the direct call: seven samples keep the row near ten seconds.
constexpr KernelSize KernelSizes[] = {{"16MiB", 16 * MiB, 15}, {"256MiB", 256 * MiB, 7}};

struct Over {
  TransportKind Kind;
  const char *Name;
};
constexpr Over Transports[] = {{TransportKind::Tcp, "tcp"}, {TransportKind::Local, "local"}};

// Held at once, in payload sizes: the input, the fresh output, the raw
// link's and the raw peer's buffers, the executor's input slab and its
// kernel's output, the child's input and output, and one to spare.
constexpr uint64_t MemoryNeeded = 9;

struct Samples {
  std::vector<double> Launch, Raw, Direct, Faults; // seconds; faults per call
  std::vector<PhaseTimes> Phases;
  uint64_t Ready = 0; // outputs received into prepared buffers
};

// What one iteration uses.
struct Parts {
  Session &S;
  std::vector<double> &In;
  RawLink &Raw;
  DirectKernel &Direct;
};

Error launchOnce(const Parts &P, Samples &Out) {
  auto T = launchScale(P.S, P.In);
  if (!T)
    return T.takeError();
  Out.Launch.push_back(*T);
  Out.Phases.push_back(P.S.stats().Last.Phases);
  Out.Ready += P.S.stats().Last.OutputsReady;
  return Error::success();
}

Error echoOnce(const Parts &P, Samples &Out) {
  auto T = timeRaw(P.Raw, reinterpret_cast<const char *>(P.In.data()));
  if (!T)
    return T.takeError();
  Out.Raw.push_back(*T);
  return Error::success();
}

Error callDirectOnce(const Parts &P, Samples &Out) {
  auto C = P.Direct.call();
  if (!C)
    return C.takeError();
  Out.Direct.push_back(C->Seconds);
  Out.Faults.push_back(double(C->Faults));
  return Error::success();
}

// One iteration: each of the three, in turn from the First-th.
Error sampleOnce(const Parts &P, size_t First, Samples &Out) {
  using Step = Error (*)(const Parts &, Samples &);
  constexpr Step Steps[] = {launchOnce, echoOnce, callDirectOnce};
  for (size_t Turn = 0; Turn < 3; ++Turn)
    if (auto Err = Steps[(First + Turn) % 3](P, Out))
      return Err;
  return Error::success();
}

void report(benchmark::State &State, const Samples &S, uint64_t Bytes) {
  double Launch = median(S.Launch), Raw = median(S.Raw), Direct = median(S.Direct);
  reportPhases(State, S.Phases);
  auto &C = State.counters;
  double Kernel = C["kernel_us"].value / 1e6;
  C["launch_us"] = Launch * 1e6;
  C["raw_us"] = Raw * 1e6;
  C["direct_kernel_us"] = Direct * 1e6;
  C["direct_faults"] = median(S.Faults);
  C["kernel_over_direct"] = Kernel / Direct;
  C["launch_over_raw_plus_direct"] = Launch / (Raw + Direct);
  C["outputs_ready"] = double(S.Ready) / double(S.Launch.size());
  C["payload_bytes"] = double(Bytes);
}

// One untimed turn of each warms every buffer, the executor's retained
// memory and the child's arena; then the timed turns.
Error sampleAll(benchmark::State &State, const Parts &P, Samples &Taken) {
  if (auto Err = sampleOnce(P, 0, Taken))
    return Err;
  Taken = Samples();
  size_t First = 0;
  for (auto _ : State) {
    if (auto Err = sampleOnce(P, First++, Taken))
      return Err;
    State.SetIterationTime(Taken.Launch.back());
  }
  return Error::success();
}

Error measure(benchmark::State &State, BenchEnv &Env, Session &S, uint64_t Bytes) {
  std::vector<double> In(Bytes / sizeof(double));
  for (size_t I = 0; I < In.size(); ++I)
    In[I] = double(I);
  auto Raw = Env.Peer->connect(Bytes, Bytes);
  if (!Raw)
    return Raw.takeError();
  auto Direct = DirectKernel::start(Env.Pins, Bytes);
  if (!Direct)
    return Direct.takeError();
  Samples Taken;
  if (auto Err = sampleAll(State, Parts{S, In, **Raw, **Direct}, Taken))
    return Err;
  report(State, Taken, Bytes);
  return Error::success();
}

void runKernel(benchmark::State &State, BenchEnv &Env, const Over &T, uint64_t Bytes) {
  if (skipUnlessMemory(State, MemoryNeeded * Bytes,
                       std::string("this ") + T.Name + " kernel launch and its references"))
    return;
  auto S = openSession(Env.Address, Strategy::ZeroCopy, {ScaleKernel}, T.Kind);
  if (!S && T.Kind == TransportKind::Local)
    return skip(State, "skipped: no shared memory here: " + toString(S.takeError()));
  if (!S)
    return fail(State, S.takeError());
  Error Err = measure(State, Env, **S, Bytes);
  Err = joinErrors(std::move(Err), (*S)->close());
  if (Err)
    return fail(State, std::move(Err));
  State.SetLabel("fresh output");
}

} // namespace

void registerKernelBenchmarks(BenchEnv &Env) {
  for (const KernelSize &Size : KernelSizes)
    for (const Over &T : Transports) {
      uint64_t Bytes = Size.Bytes;
      benchmark::RegisterBenchmark(
          (std::string("kernel/scale/") + Size.Label + "/" + T.Name).c_str(),
          [&Env, T, Bytes](benchmark::State &S) { runKernel(S, Env, T, Bytes); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(Size.Iterations);
    }
}

} // namespace catalyst::remote::bench
