//===- MemrefLayout.cpp - What a memref descriptor describes --------------===//

#include "MemrefLayout.h"

#include "copy/BoxCopy.h"
#include "copy/StridedCopy.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>

using namespace llvm;

namespace catalyst::remote::wire {

static_assert(MaxRank <= copy::MaxRank, "a memref of the wire's most dimensions must fit a box");

namespace {

Error layoutError(MemrefName Name, const Twine &What) {
  return createStringError(inconvertibleErrorCode(),
                           Twine(Name.Role) + " " + Twine(Name.Index) + ": " + What);
}

// Lowest and highest element offsets the descriptor touches.
Error span(const MemrefDesc &D, MemrefName Name, int64_t &Lo, int64_t &Hi) {
  Lo = Hi = D.offset();
  for (size_t I = 0; I < D.rank(); ++I) {
    int64_t Extent;
    if (__builtin_mul_overflow(D.size(I) - 1, D.stride(I), &Extent))
      return layoutError(Name, "stride " + Twine(D.stride(I)) + " of dimension " + Twine(I) +
                                   " overflows the address range");
    int64_t &End = Extent < 0 ? Lo : Hi;
    if (__builtin_add_overflow(End, Extent, &End))
      return layoutError(Name, "offset and strides overflow the address range");
  }
  return Error::success();
}

// Base + Offset without wrapping around the address space.
bool addressAt(uintptr_t Base, int64_t Offset, uintptr_t &At) {
  if (Offset >= 0)
    return !__builtin_add_overflow(Base, uint64_t(Offset), &At);
  return !__builtin_sub_overflow(Base, uint64_t(-(Offset + 1)) + 1, &At);
}

// Elements Lo to Hi: their count and bytes fit an int64_t (so does every
// partial offset the packer forms, each between the sums of the negative and
// of the positive extents), and so do the byte offsets of both ends, which
// must address memory without wrapping around.
Error checkSpan(const MemrefDesc &D, size_t ElemSize, int64_t Lo, int64_t Hi, MemrefLayout &L,
                MemrefName Name) {
  uint64_t SpanElems = uint64_t(Hi) - uint64_t(Lo);
  if (__builtin_add_overflow(SpanElems, 1, &SpanElems) ||
      __builtin_mul_overflow(SpanElems, ElemSize, &L.SpanBytes) ||
      L.SpanBytes > uint64_t(INT64_MAX))
    return layoutError(Name, "the span of its elements (offsets " + Twine(Lo) + " to " + Twine(Hi) +
                                 ") overflows");
  int64_t LoBytes, End, EndBytes;
  uintptr_t From, To;
  uintptr_t Base = reinterpret_cast<uintptr_t>(D.aligned());
  if (__builtin_mul_overflow(Lo, int64_t(ElemSize), &LoBytes) ||
      __builtin_add_overflow(Hi, 1, &End) ||
      __builtin_mul_overflow(End, int64_t(ElemSize), &EndBytes) ||
      !addressAt(Base, LoBytes, From) || !addressAt(Base, EndBytes, To))
    return layoutError(Name, "addressed range overflows (element offsets " + Twine(Lo) + " to " +
                                 Twine(Hi) + " from " + formatv("{0:x}", Base) + ")");
  return Error::success();
}

bool isDense(const MemrefDesc &D) {
  int64_t Expected = 1;
  for (size_t I = D.rank(); I-- > 0;) {
    if (D.size(I) != 1 && D.stride(I) != Expected)
      return false;
    Expected *= D.size(I);
  }
  return true;
}

} // namespace

void MemrefDesc::rewriteDense(void *Buffer) {
  setAllocated(Buffer);
  setAligned(Buffer);
  setOffset(0);
  int64_t Stride = 1;
  for (size_t I = Rank; I-- > 0;) {
    setStride(I, Stride);
    Stride *= std::max<int64_t>(size(I), 1);
  }
}

void MemrefDesc::describeDense(ArrayRef<int64_t> Sizes, void *Buffer) {
  assert(Sizes.size() == Rank && "a size per dimension");
  for (size_t I = 0; I < Rank; ++I)
    setSize(I, Sizes[I]);
  rewriteDense(Buffer);
}

Expected<MemrefLayout> layoutOf(const MemrefDesc &D, size_t ElemSize, MemrefName Name) {
  if (D.rank() > MaxRank)
    return layoutError(Name,
                       "rank " + Twine(D.rank()) + " is above the supported " + Twine(MaxRank));
  if (ElemSize == 0)
    return layoutError(Name, "element size is zero");
  MemrefLayout L;
  L.Elements = 1;
  for (size_t I = 0; I < D.rank(); ++I) {
    if (D.size(I) < 0)
      return layoutError(Name, "dimension " + Twine(I) + " has negative size " + Twine(D.size(I)));
    if (__builtin_mul_overflow(L.Elements, D.size(I), &L.Elements))
      return layoutError(Name, "element count overflows");
  }
  if (__builtin_mul_overflow(L.Elements, ElemSize, &L.Bytes) || L.Bytes > uint64_t(INT64_MAX))
    return layoutError(Name, "byte size overflows");
  L.Dense = true;
  if (L.Elements == 0)
    return L;
  if (!D.aligned())
    return layoutError(Name, "null data pointer with " + Twine(L.Elements) + " elements");
  int64_t Lo, Hi;
  if (auto Err = span(D, Name, Lo, Hi))
    return Err;
  if (auto Err = checkSpan(D, ElemSize, Lo, Hi, L, Name))
    return Err;
  L.FirstElement = Lo;
  L.Dense = isDense(D);
  return L;
}

MemrefPacker::MemrefPacker(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L)
    : Data(static_cast<const char *>(D.aligned()) + D.offset() * int64_t(ElemSize)),
      ElemSize(ElemSize), Remaining(L.Elements) {
  if (Remaining == 0)
    return;
  // Collapse the innermost dimensions that continue one another into a run.
  size_t Rank = D.rank();
  if (Rank > 0) {
    RunElems = D.size(Rank - 1);
    RunStride = D.stride(Rank - 1);
    --Rank;
    while (Rank > 0 &&
           (D.size(Rank - 1) == 1 || D.stride(Rank - 1) == RunStride * int64_t(RunElems))) {
      RunElems *= D.size(Rank - 1);
      --Rank;
    }
  }
  if (RunElems == 1)
    RunStride = 1;
  OuterRank = Rank;
  size_t Col = Rank;
  for (size_t I = 0; I < Rank; ++I) {
    Sizes[I] = D.size(I);
    Strides[I] = D.stride(I);
    if (Sizes[I] > 1 && Strides[I] != 0 &&
        copy::magnitude(Strides[I]) < copy::magnitude(Col == Rank ? RunStride : Strides[Col]))
      Col = I;
  }
  Transposed = RunStride != 1 && Col < Rank;
  if (Transposed) {
    WholeLineBytes = RunElems * ElemSize;
    for (size_t I = Col + 1; I < Rank; ++I)
      WholeLineBytes *= uint64_t(Sizes[I]);
    WholeLineBytes *= uint64_t(std::min<int64_t>(Sizes[Col], 2 * copy::tileEdge(ElemSize)));
  }
}

const char *MemrefPacker::runStart() const {
  int64_t Off = 0;
  for (size_t I = 0; I < OuterRank; ++I)
    Off += Index[I] * Strides[I];
  return Data + Off * int64_t(ElemSize);
}

void MemrefPacker::advanceRun() {
  for (size_t I = OuterRank; I-- > 0;) {
    if (++Index[I] < Sizes[I])
      return;
    Index[I] = 0;
  }
}

namespace {

// Whether a box this large goes around the cache: it would not stay there,
// and would push out what does. Its full tiles must write whole lines.
bool streams(const char *Dst, const copy::Box &B) {
  uint64_t Bytes = uint64_t(B.Dst[0]) * uint64_t(B.Size[0]);
  uint64_t RowBytes = uint64_t(B.Dst[B.Rank - 1]) * uint64_t(B.Size[B.Rank - 1]);
  return Bytes >= copy::StreamBytes && reinterpret_cast<uintptr_t>(Dst) % 64 == 0 &&
         RowBytes % 64 == 0;
}

} // namespace

// The largest block of whole rows of some dimension that starts here and
// fits in Capacity: its rows are consecutive in the destination. Returns
// its elements (zero when not even one run fits).
uint64_t MemrefPacker::nextBlock(size_t Capacity, size_t &Dim, int64_t &Rows) const {
  uint64_t RowElems = RunElems;
  uint64_t Best = 0;
  for (size_t Q = OuterRank; Q-- > 0;) {
    int64_t Fit = int64_t(std::min<uint64_t>(Sizes[Q] - Index[Q], Capacity / ElemSize / RowElems));
    if (Fit == 0)
      break;
    Dim = Q;
    Rows = Fit;
    Best = uint64_t(Fit) * RowElems;
    if (Index[Q] != 0)
      break; // an outer row would start before here
    RowElems *= uint64_t(Sizes[Q]);
  }
  return Best;
}

// Copies Rows rows of dimension Dim, everything inside them, as one box.
size_t MemrefPacker::packBlock(char *Dst, size_t Dim, int64_t Rows) {
  copy::Box B;
  B.ElemSize = ElemSize;
  for (size_t K = Dim; K < OuterRank; ++K) {
    int64_t Size = K == Dim ? Rows : Sizes[K];
    if (Size == 1)
      continue; // its stride may be anything, and means nothing
    B.Size[B.Rank] = Size;
    B.Src[B.Rank++] = Strides[K] * int64_t(ElemSize);
  }
  B.Size[B.Rank] = int64_t(RunElems);
  B.Src[B.Rank++] = RunStride * int64_t(ElemSize);
  int64_t Dense = int64_t(ElemSize);
  for (size_t K = B.Rank; K-- > 0;) {
    B.Dst[K] = Dense;
    Dense *= B.Size[K];
  }
  uint64_t Elems = uint64_t(Dense) / ElemSize;
  size_t Col = copy::columnOf(B);
  bool Whole = Col != B.Rank - 1 && Elems == Remaining;
  copy::copyBox(B, Col, Whole, Whole && streams(Dst, B), Dst, runStart());
  // Past the block: its last row's last run, then one more.
  Index[Dim] += Rows - 1;
  for (size_t K = Dim + 1; K < OuterRank; ++K)
    Index[K] = Sizes[K] - 1;
  advanceRun();
  Remaining -= Elems;
  return Elems * ElemSize;
}

// Runs of one element apart go by memcpy; a transposed view's by blocks
// when whole runs fit, so that it reads each cache line once.
size_t MemrefPacker::pack(char *Dst, size_t Capacity) {
  size_t Written = 0;
  while (Remaining > 0 && Capacity - Written >= ElemSize) {
    size_t Dim;
    int64_t Rows;
    if (Transposed && InRun == 0 && nextBlock(Capacity - Written, Dim, Rows) > 0) {
      Written += packBlock(Dst + Written, Dim, Rows);
      continue;
    }
    uint64_t N = std::min<uint64_t>(RunElems - InRun, (Capacity - Written) / ElemSize);
    const char *Src = runStart() + int64_t(InRun) * RunStride * int64_t(ElemSize);
    if (RunStride == 1)
      std::memcpy(Dst + Written, Src, N * ElemSize);
    else
      copy::copyElements(Dst + Written, Src, N, RunStride * int64_t(ElemSize), ElemSize);
    Written += N * ElemSize;
    InRun += N;
    Remaining -= N;
    if (InRun == RunElems) {
      InRun = 0;
      advanceRun();
    }
  }
  return Written;
}

void packAll(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L, char *Dst) {
  MemrefPacker P(D, ElemSize, L);
  P.pack(Dst, L.Bytes);
}

} // namespace catalyst::remote::wire
