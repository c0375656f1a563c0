//===- StridedCopyTest.cpp - Every full-tile copy against the plain one ---===//
//
// The packer takes the fastest tile copy the processor has, so on a machine
// with AVX-512 the AVX2 and plain ones would go untested. Each kind this
// processor can run must write what copyTile writes, element for element,
// cached or streamed, and nothing outside the tile.
//
//===----------------------------------------------------------------------===//

#include "copy/StridedCopy.h"

#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using namespace catalyst::remote::copy;

namespace {

// A buffer 64-byte aligned, as streamed destination rows must be.
struct Aligned {
  explicit Aligned(size_t Bytes) : P(static_cast<char *>(std::aligned_alloc(64, Bytes))) {}
  ~Aligned() { std::free(P); }
  char *P;
};

void expectEveryKindCopiesAsCopyTile(size_t ElemSize, bool Stream) {
  int64_t Edge = tileEdge(ElemSize);
  // Source rows a few lines and an odd element apart; destination rows two
  // lines apart, so that a write past the tile's line lands in the gap.
  TileShape S{int64_t(3 * 64 + ElemSize), int64_t(ElemSize), 128};
  size_t SrcBytes = size_t(Edge * S.SrcRow), DstBytes = size_t(Edge * S.DstCol);
  Aligned Src(SrcBytes), Want(DstBytes), Got(DstBytes);
  std::mt19937 Rng(unsigned(ElemSize * 2 + Stream));
  for (size_t I = 0; I < SrcBytes; ++I)
    Src.P[I] = char(Rng());
  std::memset(Want.P, 0x5a, DstBytes);
  copyTile(Want.P, Src.P, S, Edge, Edge, ElemSize);

  FullTileFn Kinds[MaxTileKinds];
  size_t N = fullTilesFor(ElemSize, S.SrcCol, Stream, Kinds);
  ASSERT_GE(N, 1u) << "no full tile for " << ElemSize << "-byte elements";
  EXPECT_EQ(fullTileFor(ElemSize, S.SrcCol, Stream), Kinds[0]);
  for (size_t K = 0; K < N; ++K) {
    std::memset(Got.P, 0x5a, DstBytes);
    Kinds[K](Got.P, Src.P, S);
    fenceStreams();
    for (size_t B = 0; B < DstBytes; ++B)
      ASSERT_EQ(Got.P[B], Want.P[B])
          << "kind " << K << " of " << N << " for " << ElemSize << "-byte elements"
          << (Stream ? ", streamed" : "") << ": byte " << B << " (row " << B / 128 << ")";
  }
}

TEST(StridedCopyTest, EveryTileKindWritesWhatThePlainCopyWrites) {
  for (size_t ElemSize : {1, 2, 4, 8, 16})
    for (bool Stream : {false, true}) {
      SCOPED_TRACE(testing::Message() << ElemSize << "-byte elements, stream " << Stream);
      expectEveryKindCopiesAsCopyTile(ElemSize, Stream);
    }
}

// A vector kind reads a whole source row at once: with the source's columns
// not adjacent only the plain kind may be offered.
TEST(StridedCopyTest, ColumnsApartGetOnlyThePlainKind) {
  for (size_t ElemSize : {4, 8, 16}) {
    FullTileFn Apart[MaxTileKinds], Adjacent[MaxTileKinds];
    EXPECT_EQ(fullTilesFor(ElemSize, 2 * int64_t(ElemSize), false, Apart), 1u) << ElemSize;
    size_t N = fullTilesFor(ElemSize, int64_t(ElemSize), false, Adjacent);
    EXPECT_EQ(Apart[0], Adjacent[N - 1]) << "the plain kind comes last, " << ElemSize;
  }
  FullTileFn None[MaxTileKinds];
  EXPECT_EQ(fullTilesFor(3, 3, false, None), 0u);
  EXPECT_EQ(fullTileFor(3, 3, false), nullptr);
}

} // namespace
