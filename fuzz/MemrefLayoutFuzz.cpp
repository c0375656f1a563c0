//===- MemrefLayoutFuzz.cpp - layoutOf and packing on any descriptor ------===//
//
// Input: rank (up to 8), element size, offset, sizes, strides. Whatever
// layoutOf accepts over a buffer sized exactly to its span must pack, in
// chunks of any capacity, touching only that span and writing only the
// dense bytes it promised: ASan reports any byte outside either buffer.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include <memory>

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;

namespace {

// Where the descriptor first points, so that layoutOf judges real addresses.
char Anchor[64];

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
  if (Written != L.Bytes)
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
  std::memset(Span.get(), 0, L->SpanBytes);
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
