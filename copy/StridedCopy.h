//===- StridedCopy.h - Elements from strided places to dense ones -*- C++ -*-===//
//
// The packer's inner loops: a run of elements a fixed step apart copied
// densely, and a transposed tile, whose source rows become destination
// columns. A transpose read along its destination rows takes a cache miss
// per element; a tile reads each source line once, whole, and writes each
// destination line once.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_COPY_STRIDEDCOPY_H
#define CATALYST_REMOTE_COPY_STRIDEDCOPY_H

#include <cstddef>
#include <cstdint>

namespace catalyst::remote::copy {

// Copies Count elements Step bytes apart into Dst, densely.
void copyElements(char *Dst, const char *Src, uint64_t Count, int64_t Step, size_t ElemSize);

// A tile: element R of source row C is at Src + R * SrcRow + C * SrcCol and
// goes to Dst + C * DstCol + R * ElemSize. Strides are in bytes.
struct TileShape {
  int64_t SrcRow, SrcCol, DstCol;
};

// The edge of a full tile: as many elements as fill one 64-byte line.
int64_t tileEdge(size_t ElemSize);

// Copies one full tile, tileEdge() by tileEdge() elements.
using FullTileFn = void (*)(char *Dst, const char *Src, const TileShape &S);

// The fastest full-tile copy this processor has for the element size and
// the source's column stride, or null when there is none (sizes other than
// 1, 2, 4, 8 and 16 bytes). With Stream, one that writes around the cache
// where it can (the destination's rows 64-byte aligned), for destinations
// too large to stay there; fenceStreams() then orders those writes before
// any that follow, such as the one that hands the destination over.
FullTileFn fullTileFor(size_t ElemSize, int64_t SrcCol, bool Stream);

// Every full-tile copy this processor can run for the element size and the
// source's column stride, fastest first (fullTileFor takes the first), so
// that tests can hold each to the same result. Returns how many.
inline constexpr size_t MaxTileKinds = 3;
size_t fullTilesFor(size_t ElemSize, int64_t SrcCol, bool Stream, FullTileFn (&Out)[MaxTileKinds]);
void fenceStreams();

// Copies a tile of any extent, Rows by Cols elements.
void copyTile(char *Dst, const char *Src, const TileShape &S, int64_t Rows, int64_t Cols,
              size_t ElemSize);

} // namespace catalyst::remote::copy

#endif
