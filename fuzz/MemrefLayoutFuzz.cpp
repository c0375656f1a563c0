//===- MemrefLayoutFuzz.cpp - layoutOf and packing on any descriptor ------===//
//
// Input: rank (up to 8), element size, offset, sizes, strides. Whatever
// layoutOf accepts over a buffer sized exactly to its span must pack, in
// chunks of any capacity, touching only that span and writing only the
// dense bytes it promised (ASan reports any byte outside either buffer),
// each element where an index walk puts it.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include <memory>

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;

namespace {

// Where the descriptor first points, so that layoutOf judges real addresses.
char Anchor[64];

// Where a plain walk over the indices, in row-major order, puts each
// element: what the packer must produce, whichever way it goes.
bool matchesIndexWalk(const wire::MemrefDesc &D, size_t Elem, const char *Packed,
                      uint64_t Elements) {
  int64_t Index[8] = {};
  const char *Base = static_cast<const char *>(D.aligned());
  for (uint64_t E = 0; E < Elements; ++E) {
    int64_t Off = D.offset();
    for (size_t K = 0; K < D.rank(); ++K)
      Off += Index[K] * D.stride(K);
    if (std::memcmp(Packed + E * Elem, Base + Off * int64_t(Elem), Elem) != 0)
      return false;
    for (size_t K = D.rank(); K-- > 0 && ++Index[K] == D.size(K);)
      Index[K] = 0;
  }
  return true;
}

void packInChunks(const wire::MemrefDesc &D, size_t Elem, const wire::MemrefLayout &L,
                  FuzzInput &In) {
  std::unique_ptr<char[]> Dst(new char[L.Bytes ? L.Bytes : 1]);
  wire::MemrefPacker P(D, Elem, L);
  uint64_t Written = 0;
  while (!P.done()) {
    size_t Capacity = std::max<size_t>(In.take<uint16_t>() % 4096, Elem);
    Capacity = std::min<uint64_t>(Capacity, L.Bytes - Written);
    size_t N = P.pack(Dst.get() + Written, Capacity);
    if (N == 0 || N % Elem)
      __builtin_trap(); // no progress, or a torn element
    Written += N;
  }
  if (Written != L.Bytes || !matchesIndexWalk(D, Elem, Dst.get(), L.Elements))
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  size_t Rank = In.take<uint8_t>() % 9;
  size_t Elem = FuzzElemSizes[In.take<uint8_t>() % std::size(FuzzElemSizes)];
  std::vector<char> Bytes(wire::MemrefDesc::byteSize(Rank));
  wire::MemrefDesc D(Bytes.data(), Rank);
  D.setAligned(Anchor);
  D.setOffset(In.take<int64_t>());
  for (size_t K = 0; K < Rank; ++K)
    D.setSize(K, In.take<int64_t>());
  for (size_t K = 0; K < Rank; ++K)
    D.setStride(K, In.take<int64_t>());
  auto L = wire::layoutOf(D, Elem, {"fuzz", 0});
  if (!L) {
    llvm::consumeError(L.takeError()); // refusing is a fine answer
    return 0;
  }
  // Spans up to 64 KiB keep this target fast; the arithmetic is the same.
  constexpr uint64_t MaxSpan = 64 << 10;
  if (L->SpanBytes > MaxSpan || L->Bytes > MaxSpan || L->Elements == 0)
    return 0;
  std::unique_ptr<char[]> Span(new char[L->SpanBytes]);
  for (uint64_t I = 0; I < L->SpanBytes; ++I)
    Span[I] = char(I * 31 + I / 251); // no two nearby elements alike
  // Rebase so that the lowest element is the buffer's first byte.
  uintptr_t Aligned =
      reinterpret_cast<uintptr_t>(Span.get()) - uintptr_t(L->FirstElement * int64_t(Elem));
  D.setAligned(reinterpret_cast<void *>(Aligned));
  auto Again = wire::layoutOf(D, Elem, {"fuzz", 0});
  if (!Again) {
    llvm::consumeError(Again.takeError()); // these addresses wrap: refused
    return 0;
  }
  if (Again->SpanBytes != L->SpanBytes || Again->FirstElement != L->FirstElement)
    __builtin_trap();
  packInChunks(D, Elem, *Again, In);
  return 0;
}
