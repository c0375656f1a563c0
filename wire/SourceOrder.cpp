//===- SourceOrder.cpp - A transposed input sent in its own order ---------===//

#include "SourceOrder.h"

#include "copy/StridedCopy.h"

#include <algorithm>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

Error notPermutation(MemrefName Name, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(),
                           Twine(Name.Role) + " " + Twine(Name.Index) + " in source order: " + Why);
}

// A chunk this large stays in the receiver's cache between the socket's
// copy and the transpose.
constexpr uint64_t ChunkTarget = 1 << 20;

} // namespace

Expected<SourceOrder> SourceOrder::of(ArrayRef<int64_t> Sizes, ArrayRef<int64_t> Strides,
                                      size_t ElemSize, MemrefName Name) {
  if (Sizes.size() != Strides.size() || Sizes.size() > MaxRank || ElemSize == 0)
    return notPermutation(Name, "rank or element size out of range");
  SourceOrder S;
  copy::Box &B = S.View;
  B.ElemSize = ElemSize;
  uint64_t Elements = 1;
  for (size_t K = 0; K < Sizes.size(); ++K) {
    if (Sizes[K] <= 0)
      return notPermutation(Name, "dimension " + Twine(K) + " has size " + Twine(Sizes[K]));
    if (__builtin_mul_overflow(Elements, uint64_t(Sizes[K]), &Elements))
      return notPermutation(Name, "element count overflows");
    if (Sizes[K] == 1)
      continue; // its stride means nothing
    if (Strides[K] <= 0)
      return notPermutation(Name, "dimension " + Twine(K) + " has stride " + Twine(Strides[K]));
    B.Size[B.Rank] = Sizes[K];
    B.Src[B.Rank++] = Strides[K];
  }
  if (B.Rank == 0)
    return notPermutation(Name, "a single element has no order");
  // Sorted by stride, the dimensions must be the array's, densely.
  size_t ByStride[MaxRank];
  for (size_t K = 0; K < B.Rank; ++K)
    ByStride[K] = K;
  std::sort(ByStride, ByStride + B.Rank, [&](size_t X, size_t Y) { return B.Src[X] < B.Src[Y]; });
  uint64_t Expected = 1;
  for (size_t I = 0; I < B.Rank; ++I) {
    size_t K = ByStride[I];
    if (uint64_t(B.Src[K]) != Expected)
      return notPermutation(Name, "strides are not a permutation of a dense array's");
    Expected *= uint64_t(B.Size[K]); // at most Elements: no overflow
  }
  uint64_t Bytes;
  if (__builtin_mul_overflow(Elements, ElemSize, &Bytes) || Bytes > uint64_t(INT64_MAX))
    return notPermutation(Name, "byte size overflows");
  S.Outer = ByStride[B.Rank - 1];
  S.Rows = B.Size[S.Outer];
  S.RowBytes = uint64_t(B.Src[S.Outer]) * ElemSize;
  if (S.RowBytes > MaxRowBytes)
    return notPermutation(Name,
                          "rows of " + Twine(S.RowBytes) + " bytes, above " + Twine(MaxRowBytes));
  // Bytes on either side; the destination dense in the view's order.
  int64_t Dense = int64_t(ElemSize);
  for (size_t K = B.Rank; K-- > 0;) {
    B.Src[K] *= int64_t(ElemSize);
    B.Dst[K] = Dense;
    Dense *= B.Size[K];
  }
  S.Col = copy::columnOf(B);
  return S;
}

std::optional<SourceOrder> SourceOrder::worthSending(const MemrefDesc &D, size_t ElemSize,
                                                     const MemrefLayout &L) {
  if (L.Dense || L.SpanBytes != L.Bytes || D.offset() != L.FirstElement)
    return std::nullopt;
  // Runs of adjacent elements already pack at memcpy speed.
  size_t Inner = D.rank();
  while (Inner > 0 && D.size(Inner - 1) == 1)
    --Inner;
  if (Inner == 0 || D.stride(Inner - 1) == 1)
    return std::nullopt;
  int64_t Sizes[MaxRank], Strides[MaxRank];
  for (size_t K = 0; K < D.rank(); ++K) {
    Sizes[K] = D.size(K);
    Strides[K] = D.stride(K);
  }
  auto S = of({Sizes, D.rank()}, {Strides, D.rank()}, ElemSize, {"input", 0});
  if (!S) {
    consumeError(S.takeError()); // not a permutation: the packer sends it
    return std::nullopt;
  }
  return std::move(*S);
}

int64_t SourceOrder::chunkRows() const {
  int64_t Edge = copy::tileEdge(View.ElemSize);
  int64_t N = int64_t(std::max<uint64_t>(1, ChunkTarget / RowBytes));
  // As many rows as a line has elements, where they are the destination's
  // columns: every write is then a whole line.
  int64_t Lined = (N + Edge - 1) / Edge * Edge;
  if (Outer == View.Rank - 1 && uint64_t(Lined) * RowBytes <= MaxRowBytes)
    N = Lined;
  return std::min(N, Rows);
}

void SourceOrder::unpack(int64_t First, int64_t Count, const char *Src, char *Dst) const {
  copy::Box B = View;
  B.Size[Outer] = Count;
  Dst += First * B.Dst[Outer];
  // Full tiles may stream when every destination row they write starts on
  // a line: the rows of the view and the chunk's first row.
  bool Aligned = reinterpret_cast<uintptr_t>(Dst) % 64 == 0;
  for (size_t K = 0; K + 1 < B.Rank; ++K)
    Aligned = Aligned && B.Dst[K] % 64 == 0;
  bool Stream = Aligned && bytes() >= copy::StreamBytes;
  copy::copyBox(B, Col, /*SourceOrder=*/true, Stream, Dst, Src);
}

} // namespace catalyst::remote::wire
