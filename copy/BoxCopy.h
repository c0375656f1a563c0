//===- BoxCopy.h - A block of strided elements copied tile by tile -*- C++ -*-===//
//
// The transposing copy under the packer (MemrefLayout.h) and the receiver
// of source-ordered inputs (SourceOrder.h): a box of elements whose
// dimensions have arbitrary byte strides on either side, copied in tiles
// that read and write whole cache lines.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_COPY_BOXCOPY_H
#define CATALYST_REMOTE_COPY_BOXCOPY_H

#include <cstddef>
#include <cstdint>

namespace catalyst::remote::copy {

// The most dimensions of a memref a box is cut from: a memref's most on
// the wire (wire::MaxRank, which MemrefLayout.cpp checks is no more). A box
// has room for one more: the packer adds a row's run as a dimension.
inline constexpr size_t MaxRank = 64;

// A block of a strided memref and where it goes in a dense destination:
// per dimension, its size and its strides in bytes on either side. The last
// dimension is the destination's rows, its elements adjacent there.
struct Box {
  size_t Rank = 0;
  size_t ElemSize = 0;
  int64_t Size[MaxRank + 1];
  int64_t Src[MaxRank + 1];
  int64_t Dst[MaxRank + 1];
};

// The dimension, other than the innermost, that the source holds closest
// together, if it is closer than the innermost's (a stride of zero repeats
// one element: no use); else the innermost, and tiles are single rows.
size_t columnOf(const Box &B);

// Copies B from Src to Dst tile by tile against column Col (columnOf), in
// destination order or, with SourceOrder, in source order (see BoxCopy.cpp).
// With Stream, full tiles write around the cache, which needs every full
// tile's destination rows 64-byte aligned; the writes are fenced at the end.
void copyBox(const Box &B, size_t Col, bool SourceOrder, bool Stream, char *Dst, const char *Src);

uint64_t magnitude(int64_t V);

// Transposed views from this size on are written around the cache: they
// would not stay there, and would push out what does.
inline constexpr uint64_t StreamBytes = 8 << 20;

} // namespace catalyst::remote::copy

#endif
