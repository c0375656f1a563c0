//===- PackBench.cpp - The packer alone, against a memcpy -----------------===//
//
// pack/transposed/<size>[/<type>]: a transposed rank-3 view (the array
// [D0][D1][D2] seen as [D2][D1][D0], strides {1, D2, D1 * D2}) packed whole
// into a dense, line-aligned buffer, as a send into the shared slab packs
// it, taking turns with a copy of the same bytes between the same two
// buffers as a dense input's send makes it (copy::copyBulk), so that both
// see the same load.
//   16MiB, 256MiB   f64, the launch benchmarks' view (LaunchCase)
//   256MiB/f32      4-byte elements, 512 x 512 x 256
//   256MiB/c128     16-byte elements (complex128), 256 cubed
//   256MiB/f64_odd  f64, 322 cubed: rows that do not fill whole cache lines
//   pack_us, copy_us  medians
//   ratio_to_copy     pack_us / copy_us: what the strides cost
// It reaches past the engine's public headers for the packer: the launch
// rows show the packer only inside a launch's send phase.
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "Median.h"
#include "copy/BulkCopy.h"
#include "wire/MemrefLayout.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

struct PackCase {
  const char *Name;
  size_t ElemSize;
  int64_t Dims[3]; // the array's, outermost first
  int Iterations;

  uint64_t bytes() const { return uint64_t(Dims[0] * Dims[1] * Dims[2]) * ElemSize; }
};

constexpr PackCase PackCases[] = {
    {"16MiB", 8, {128, 128, 128}, 15},         {"256MiB", 8, {512, 256, 256}, 7},
    {"256MiB/f32", 4, {512, 512, 256}, 7},     {"256MiB/c128", 16, {256, 256, 256}, 7},
    {"256MiB/f64_odd", 8, {322, 322, 322}, 7},
};

using Buffer = std::unique_ptr<char, decltype(&std::free)>;

Buffer lineAligned(uint64_t Bytes) {
  return Buffer(static_cast<char *>(std::aligned_alloc(64, (Bytes + 63) / 64 * 64)), std::free);
}

double secondsOf(void (*Run)(void *), void *Arg) {
  auto Start = std::chrono::steady_clock::now();
  Run(Arg);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
}

// The transposed view of Src's array, in Words.
void describe(const PackCase &C, const char *Src, int64_t (&Words)[9]) {
  std::memcpy(&Words[0], &Src, sizeof(Src));
  std::memcpy(&Words[1], &Src, sizeof(Src));
  Words[2] = 0;
  const int64_t Sizes[3] = {C.Dims[2], C.Dims[1], C.Dims[0]};
  const int64_t Strides[3] = {1, C.Dims[2], C.Dims[1] * C.Dims[2]};
  std::memcpy(&Words[3], Sizes, sizeof(Sizes));
  std::memcpy(&Words[6], Strides, sizeof(Strides));
}

struct Job {
  wire::MemrefDesc &D;
  const wire::MemrefLayout &L;
  size_t ElemSize;
  char *Dst;
  const char *Src;
  uint64_t Bytes;
};

void runPack(benchmark::State &State, const PackCase &C) {
  uint64_t Bytes = C.bytes();
  if (skipUnlessMemory(State, 2 * Bytes, "the view and its packed copy"))
    return;
  Buffer Src = lineAligned(Bytes), Dst = lineAligned(Bytes);
  if (!Src || !Dst)
    return skip(State, "skipped: no memory for the view or its packed copy");
  for (uint64_t I = 0; I < Bytes; ++I)
    Src.get()[I] = char(I * 131 >> 3);
  std::memset(Dst.get(), 0, Bytes); // fault it in before the first sample
  int64_t Words[9];
  describe(C, Src.get(), Words);
  wire::MemrefDesc D(Words, 3);
  auto L = wire::layoutOf(D, C.ElemSize, {"input", 0});
  if (!L)
    return fail(State, L.takeError());
  Job J{D, *L, C.ElemSize, Dst.get(), Src.get(), Bytes};
  std::vector<double> Pack, Copy;
  for (auto _ : State) {
    double P = secondsOf(
        [](void *A) {
          auto &J = *static_cast<Job *>(A);
          wire::packAll(J.D, J.ElemSize, J.L, J.Dst);
        },
        &J);
    double M = secondsOf(
        [](void *A) {
          auto &J = *static_cast<Job *>(A);
          copy::copyBulk(J.Dst, J.Src, J.Bytes);
        },
        &J);
    State.SetIterationTime(P);
    Pack.push_back(P * 1e6);
    Copy.push_back(M * 1e6);
  }
  State.counters["pack_us"] = median(Pack);
  State.counters["copy_us"] = median(Copy);
  State.counters["ratio_to_copy"] = median(Pack) / median(Copy);
  State.SetBytesProcessed(int64_t(Bytes) * State.iterations());
}

} // namespace

void registerPackBenchmarks() {
  for (const PackCase &C : PackCases)
    benchmark::RegisterBenchmark((std::string("pack/transposed/") + C.Name).c_str(),
                                 [&C](benchmark::State &S) { runPack(S, C); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(C.Iterations);
}

} // namespace catalyst::remote::bench
