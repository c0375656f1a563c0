//===- BoxCopy.cpp - A block of strided elements copied tile by tile ------===//

#include "BoxCopy.h"

#include "StridedCopy.h"

#include <algorithm>

namespace catalyst::remote::copy {

namespace {

// A box copied tile by tile: its innermost dimension (the destination's
// rows, far apart in the source) against its column, the dimension the
// source holds closest together, in one of two orders.
//
// Destination order: the column two tiles' edges at a time (two tiles side
// by side read 128 bytes of each source row, the pair of lines the
// processor fetches together), the other dimensions one by one, so that
// the writes go forward in as many streams as the tiles have columns. It
// waits on memory for each source row, but needs only whole lines of the
// destination (MemrefPacker::wholeLineBytes): the order for part of a view.
//
// Source order: the dimensions by decreasing source stride, the rows at
// least 32 at a time (SourceRows) and the column innermost. Each step reads
// those source rows forward, streams the processor prefetches, and writes
// whole destination lines, which large boxes send around the cache
// (Stream). Faster on a whole view; cut into parts, it reads short runs
// and loses that.
//
// Why 32: fewer streams leave the prefetchers idle; more than they track
// and each row's lines are fetched on demand. pack/transposed/<size>
// (benchmarks/PackBench.cpp, its ratio_to_copy) measures the packer on a
// whole view against a bulk copy; try another value there.
constexpr int64_t SourceRows = 32;

class TileWalk {
public:
  TileWalk(const Box &B, size_t Col, bool SourceOrder, bool Stream)
      : B(B), Inner(B.Rank - 1), Paired(SourceOrder ? Inner : Col), Last(SourceOrder ? Col : Inner),
        Edge(tileEdge(B.ElemSize)),
        PairStep(SourceOrder ? std::max(2 * Edge, SourceRows / Edge * Edge) : 2 * Edge),
        Shape{B.Src[Inner], B.Src[Col], B.Dst[Col]},
        Full(fullTileFor(B.ElemSize, Shape.SrcCol, Stream)), Stream(Stream) {
    for (size_t K = 0; K < B.Rank; ++K)
      if (K != Last)
        Order[Levels++] = K;
    if (SourceOrder)
      std::sort(Order, Order + Levels, [&](size_t X, size_t Y) {
        uint64_t MX = magnitude(B.Src[X]), MY = magnitude(B.Src[Y]);
        return MX != MY ? MX > MY : X < Y;
      });
  }

  void run(char *Dst, const char *Src) {
    walk(0, Dst, Src, 1);
    if (Stream)
      fenceStreams();
  }

private:
  // Pair: how many of the paired dimension's rows the tiles below take.
  void walk(size_t L, char *Dst, const char *Src, int64_t Pair) {
    if (L == Levels)
      return tiles(Dst, Src, Pair);
    size_t K = Order[L];
    int64_t Step = K == Paired ? PairStep : 1;
    for (int64_t I = 0; I < B.Size[K]; I += Step)
      walk(L + 1, Dst + I * B.Dst[K], Src + I * B.Src[K],
           K == Paired ? std::min(Step, B.Size[K] - I) : Pair);
  }

  void tiles(char *Dst, const char *Src, int64_t Pair) {
    for (int64_t X = 0; X < B.Size[Last]; X += Edge)
      for (int64_t Y = 0; Y < Pair; Y += Edge) {
        int64_t XN = std::min(Edge, B.Size[Last] - X), YN = std::min(Edge, Pair - Y);
        bool RowsX = Last == Inner;
        tile(Dst, Src, RowsX ? X : Y, RowsX ? XN : YN, RowsX ? Y : X, RowsX ? YN : XN);
      }
  }

  // Rows R.. and columns C.., at most a tile's edge of each.
  void tile(char *Dst, const char *Src, int64_t R, int64_t Rows, int64_t C, int64_t Width) {
    char *To = Dst + R * B.Dst[Inner] + C * Shape.DstCol;
    const char *From = Src + R * Shape.SrcRow + C * Shape.SrcCol;
    if (Full && Rows == Edge && Width == Edge)
      Full(To, From, Shape);
    else
      copyTile(To, From, Shape, Rows, Width, B.ElemSize);
  }

  const Box &B;
  size_t Inner;
  size_t Paired, Last; // taken PairStep at a time; walked innermost
  int64_t Edge;
  int64_t PairStep; // a multiple of Edge
  TileShape Shape;
  FullTileFn Full; // null for element sizes without one
  bool Stream;
  size_t Order[MaxRank + 1]; // the dimensions but Last, outermost first
  size_t Levels = 0;
};

} // namespace

uint64_t magnitude(int64_t V) {
  return V < 0 ? 0 - uint64_t(V) : uint64_t(V);
}

size_t columnOf(const Box &B) {
  size_t Col = B.Rank - 1;
  for (size_t K = 0; K + 1 < B.Rank; ++K) {
    uint64_t M = magnitude(B.Src[K]);
    if (M != 0 && M < magnitude(B.Src[Col]))
      Col = K;
  }
  return Col;
}

void copyBox(const Box &B, size_t Col, bool SourceOrder, bool Stream, char *Dst, const char *Src) {
  TileWalk(B, Col, SourceOrder, Stream).run(Dst, Src);
}

} // namespace catalyst::remote::copy
