//===- HostOutputs.cpp - Host buffers receiving one launch's outputs ------===//

#include "HostOutputs.h"

#include "OutputForecast.h"
#include "wire/MemrefLayout.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>
#include <sys/mman.h>

using namespace llvm;

namespace catalyst::remote {

// A fresh output buffer is written once, by the receive, and every 4 KiB
// page of it faults on the way: for large outputs that costs as much as the
// transfer. Transparent huge pages (madvise mode) fault once per 2 MiB.
void adviseHugePages(char *Buf, uint64_t Bytes) {
  constexpr uintptr_t Huge = 2 << 20;
  if (Bytes < 2 * Huge)
    return;
  uintptr_t Start = (reinterpret_cast<uintptr_t>(Buf) + Huge - 1) & ~(Huge - 1);
  uintptr_t End = (reinterpret_cast<uintptr_t>(Buf) + Bytes) & ~(Huge - 1);
  if (End > Start)
    // A hint: refused (no transparent huge pages), the buffer is as good.
    ::madvise(reinterpret_cast<void *>(Start), End - Start, MADV_HUGEPAGE);
}

HostOutputs::HostOutputs(ArrayRef<MemrefArg> Outputs, OutputAllocator Alloc,
                         ArrayRef<MutableArrayRef<char>> Into, OutputForecast *Forecast,
                         uint64_t MaxBytes)
    : Outputs(Outputs), Alloc(Alloc), Into(Into), Forecast(Forecast), MaxBytes(MaxBytes),
      Buffers(Outputs.size(), nullptr), Bytes(Outputs.size(), 0), Lent(Outputs.size(), false) {}

HostOutputs::~HostOutputs() {
  if (Committed)
    return;
  for (size_t I = 0; I < Outputs.size(); ++I) {
    if (Buffers[I] && !Lent[I] && Alloc.Release)
      Alloc.Release(Buffers[I]);
    if (Outputs[I].Desc)
      std::memset(Outputs[I].Desc, 0, wire::MemrefDesc::byteSize(Outputs[I].Rank));
  }
}

Expected<uint64_t> HostOutputs::bytesOf(size_t I, ArrayRef<int64_t> Sizes) const {
  const MemrefArg &Out = Outputs[I];
  if (Sizes.size() != Out.Rank)
    return createStringError(inconvertibleErrorCode(),
                             "output %zu: executor returned rank %zu, expected %zu", I,
                             Sizes.size(), Out.Rank);
  uint64_t Bytes = Out.ElemSize;
  for (int64_t S : Sizes)
    if (S < 0 || __builtin_mul_overflow(Bytes, uint64_t(S), &Bytes))
      return createStringError(inconvertibleErrorCode(),
                               "output %zu: executor returned an invalid shape", I);
  return Bytes;
}

Expected<MutableArrayRef<char>> HostOutputs::allocate(size_t I, ArrayRef<int64_t> Sizes) {
  auto Counted = bytesOf(I, Sizes);
  if (!Counted)
    return Counted.takeError();
  uint64_t Size = *Counted;
  if (Size > MaxBytes - BytesGiven)
    return createStringError(std::errc::file_too_large,
                             "output %zu: the executor returned %llu bytes, which with the "
                             "launch's other outputs (%llu bytes) is more than the %llu bytes "
                             "allowed (SessionOptions::MaxOutputBytes, "
                             "CATALYST_REMOTE_MAX_OUTPUT_MIB)",
                             I, (unsigned long long)Size, (unsigned long long)BytesGiven,
                             (unsigned long long)MaxBytes);
  BytesGiven += Size;
  const MemrefArg &Out = Outputs[I];
  wire::MemrefDesc D(Out.Desc, Out.Rank);
  for (size_t K = 0; K < Sizes.size(); ++K)
    D.setSize(K, Sizes[K]);
  Bytes[I] = Size;
  if (I < Into.size() && Into[I].data() && Size <= Into[I].size()) {
    Lent[I] = true;
    Buffers[I] = Into[I].data();
  } else if (!(Buffers[I] = freshBuffer(I, Size))) {
    return createStringError(std::errc::not_enough_memory,
                             "output %zu: cannot allocate %llu bytes on the host", I,
                             (unsigned long long)Size);
  }
  return MutableArrayRef<char>(Buffers[I], Size);
}

void HostOutputs::keep(size_t I, uint64_t Id) {
  assert(I < Outputs.size() && Id && "a kept output has an id");
  KeptIds.resize(Outputs.size(), 0);
  KeptIds[I] = Id;
}

Error HostOutputs::keptShape(size_t I, ArrayRef<int64_t> Sizes) {
  assert(keptAs(I) && "output I is kept");
  auto Counted = bytesOf(I, Sizes);
  if (!Counted)
    return Counted.takeError();
  wire::MemrefDesc D(Outputs[I].Desc, Outputs[I].Rank);
  for (size_t K = 0; K < Sizes.size(); ++K)
    D.setSize(K, Sizes[K]);
  return Error::success();
}

char *HostOutputs::freshBuffer(size_t I, uint64_t Bytes) {
  if (Forecast)
    if (char *Ready = Forecast->take(I, Bytes)) {
      ++ReadyTaken;
      return Ready;
    }
  // A zero-size output still gets a distinct buffer, as MLIR's own do.
  char *Buf = static_cast<char *>(Alloc.Allocate(Bytes ? Bytes : 1));
  if (Buf)
    adviseHugePages(Buf, Bytes);
  return Buf;
}

void HostOutputs::commit() {
  for (size_t I = 0; I < Outputs.size(); ++I) {
    assert((Buffers[I] || keptAs(I)) && "every output allocated or kept");
    wire::MemrefDesc(Outputs[I].Desc, Outputs[I].Rank).rewriteDense(Buffers[I]);
  }
  Committed = true;
}

} // namespace catalyst::remote
