//===- PackBench.cpp - The packer alone, against a memcpy -----------------===//
//
// pack/transposed/<size>: the launch benchmarks' transposed rank-3 f64 view
// (LaunchCase) packed whole into a dense, line-aligned buffer, as a send
// into the shared slab packs it, taking turns with one memcpy of the same
// bytes between the same two buffers, so that both see the same load.
//   pack_us, memcpy_us  medians
//   ratio_to_memcpy     pack_us / memcpy_us: what the strides cost
// It reaches past the engine's public headers for the packer: the launch
// rows show the packer only inside a launch's send phase.
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "LaunchCase.h"
#include "Median.h"
#include "wire/MemrefLayout.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

struct PackSize {
  const char *Label;
  uint64_t Bytes;
  int Iterations;
};
constexpr PackSize PackSizes[] = {{"16MiB", 16 << 20, 15}, {"256MiB", 256 << 20, 7}};

double secondsOf(void (*Run)(void *), void *Arg) {
  auto Start = std::chrono::steady_clock::now();
  Run(Arg);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
}

void runPack(benchmark::State &State, uint64_t Bytes) {
  if (skipUnlessMemory(State, 3 * Bytes, "the view, its dense copy and its packed copy"))
    return;
  LaunchCase Case(CaseShape{Bytes, 1, /*Strided=*/true, /*Into=*/false});
  const MemrefArg &In = Case.call().Inputs[0];
  wire::MemrefDesc D(In.Desc, In.Rank);
  auto L = wire::layoutOf(D, In.ElemSize, {"input", 0});
  if (!L)
    return fail(State, L.takeError());
  std::unique_ptr<char, decltype(&std::free)> Dst(
      static_cast<char *>(std::aligned_alloc(64, Bytes)), std::free);
  if (!Dst)
    return skip(State, "skipped: no memory for the packed copy");
  std::memset(Dst.get(), 0, Bytes); // fault it in before the first sample
  struct Job {
    wire::MemrefDesc &D;
    const wire::MemrefLayout &L;
    size_t ElemSize;
    char *Dst;
    const char *Src;
    uint64_t Bytes;
  } J{D, *L, In.ElemSize, Dst.get(), Case.payload(), Bytes};
  std::vector<double> Pack, Copy;
  for (auto _ : State) {
    double P = secondsOf(
        [](void *A) {
          auto &J = *static_cast<Job *>(A);
          wire::packAll(J.D, J.ElemSize, J.L, J.Dst);
        },
        &J);
    double C = secondsOf(
        [](void *A) {
          auto &J = *static_cast<Job *>(A);
          std::memcpy(J.Dst, J.Src, J.Bytes);
        },
        &J);
    State.SetIterationTime(P);
    Pack.push_back(P * 1e6);
    Copy.push_back(C * 1e6);
  }
  State.counters["pack_us"] = median(Pack);
  State.counters["memcpy_us"] = median(Copy);
  State.counters["ratio_to_memcpy"] = median(Pack) / median(Copy);
  State.SetBytesProcessed(int64_t(Bytes) * State.iterations());
}

} // namespace

void registerPackBenchmarks() {
  for (const PackSize &Size : PackSizes) {
    uint64_t Bytes = Size.Bytes;
    benchmark::RegisterBenchmark((std::string("pack/transposed/") + Size.Label).c_str(),
                                 [Bytes](benchmark::State &S) { runPack(S, Bytes); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(Size.Iterations);
  }
}

} // namespace catalyst::remote::bench
