//===- MemrefPackerTest.cpp - Packing every view, in chunks of any size ---===//
//
// The packer walks a strided view in row-major order, by runs or, for a
// transposed view, by cache-sized blocks. Whatever path it takes, each
// element must land where a plain index walk puts it, and a pack() cut
// short by its capacity must resume exactly where it stopped.
//
//===----------------------------------------------------------------------===//

#include "Memref.h"
#include "wire/MemrefLayout.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <numeric>
#include <random>

using namespace catalyst::remote;
using catalyst::remote::test::numbered;

namespace {

struct View {
  std::vector<int64_t> Sizes, Strides;
  int64_t Offset = 0;
};

std::vector<char> byIndexWalk(const View &V, const char *Src, size_t ElemSize) {
  size_t Rank = V.Sizes.size();
  uint64_t Elems = 1;
  for (int64_t S : V.Sizes)
    Elems *= uint64_t(S);
  std::vector<char> Out(Elems * ElemSize);
  std::vector<int64_t> Index(Rank, 0);
  for (uint64_t E = 0; E < Elems; ++E) {
    int64_t Off = V.Offset;
    for (size_t K = 0; K < Rank; ++K)
      Off += Index[K] * V.Strides[K];
    std::memcpy(&Out[E * ElemSize], Src + Off * int64_t(ElemSize), ElemSize);
    for (size_t K = Rank; K-- > 0 && ++Index[K] == V.Sizes[K];)
      Index[K] = 0;
  }
  return Out;
}

// Packs V of Src in chunks of at most Chunk bytes, or all at once (zero)
// to Shift bytes past a cache line.
std::vector<char> packed(const View &V, char *Src, size_t ElemSize, size_t Chunk,
                         size_t Shift = 0) {
  size_t Rank = V.Sizes.size();
  std::vector<char> Bytes(wire::MemrefDesc::byteSize(Rank));
  wire::MemrefDesc D(Bytes.data(), Rank);
  D.setAllocated(Src);
  D.setAligned(Src);
  D.setOffset(V.Offset);
  for (size_t K = 0; K < Rank; ++K) {
    D.setSize(K, V.Sizes[K]);
    D.setStride(K, V.Strides[K]);
  }
  auto L = wire::layoutOf(D, ElemSize, {"input", 0});
  EXPECT_TRUE(bool(L)) << toString(L.takeError());
  if (!L)
    return {};
  std::vector<char> Out(L->Bytes);
  if (Chunk == 0) {
    std::unique_ptr<char, decltype(&std::free)> Line(
        static_cast<char *>(std::aligned_alloc(64, (L->Bytes + Shift + 63) / 64 * 64)), std::free);
    wire::packAll(D, ElemSize, *L, Line.get() + Shift);
    std::memcpy(Out.data(), Line.get() + Shift, L->Bytes);
    return Out;
  }
  wire::MemrefPacker P(D, ElemSize, *L);
  size_t Written = 0;
  while (!P.done()) {
    size_t N = P.pack(Out.data() + Written, std::min(Chunk, Out.size() - Written));
    EXPECT_GT(N, 0u) << "no progress";
    EXPECT_EQ(N % ElemSize, 0u) << "a torn element";
    if (N == 0)
      break;
    Written += N;
  }
  EXPECT_EQ(Written, Out.size());
  return Out;
}

// A dense buffer of the given sizes, viewed through a permutation of its
// dimensions, some reversed and some stepped over.
View permuted(std::mt19937_64 &Rng, size_t Rank, bool Reverse, bool Step) {
  std::vector<int64_t> Dense(Rank);
  for (auto &S : Dense)
    S = 1 + int64_t(Rng() % 40);
  std::vector<int64_t> Stride(Rank);
  int64_t Acc = 1;
  for (size_t K = Rank; K-- > 0;) {
    Stride[K] = Acc * (Step && K == Rank - 1 ? 2 : 1);
    Acc *= Dense[K] * (Step && K == Rank - 1 ? 2 : 1);
  }
  std::vector<size_t> Perm(Rank);
  std::iota(Perm.begin(), Perm.end(), 0);
  std::shuffle(Perm.begin(), Perm.end(), Rng);
  View V;
  for (size_t K : Perm) {
    V.Sizes.push_back(Dense[K]);
    bool Back = Reverse && Rng() % 2;
    V.Strides.push_back(Back ? -Stride[K] : Stride[K]);
    if (Back)
      V.Offset += (Dense[K] - 1) * Stride[K];
  }
  return V;
}

uint64_t spanOf(const View &V) {
  int64_t Hi = V.Offset;
  for (size_t K = 0; K < V.Sizes.size(); ++K)
    if (V.Strides[K] > 0)
      Hi += (V.Sizes[K] - 1) * V.Strides[K];
  return uint64_t(Hi) + 1;
}

TEST(MemrefPackerTest, EveryPermutationPacksAsAnIndexWalkDoes) {
  std::mt19937_64 Rng(11);
  for (int Case = 0; Case < 400; ++Case) {
    size_t Rank = 1 + Rng() % 4;
    size_t ElemSize = size_t(1) << (Rng() % 5);
    View V = permuted(Rng, Rank, Case % 3 == 1, Case % 5 == 2);
    std::vector<char> Src = numbered(spanOf(V), ElemSize);
    std::vector<char> Want = byIndexWalk(V, Src.data(), ElemSize);
    size_t Chunk = Case % 4 == 0 ? 0 : ElemSize * (1 + Rng() % 3000);
    ASSERT_EQ(packed(V, Src.data(), ElemSize, Chunk), Want)
        << "case " << Case << ", rank " << Rank << ", element size " << ElemSize << ", chunk "
        << Chunk;
  }
}

// Large enough that the blocks split several times in every dimension.
TEST(MemrefPackerTest, ATransposedCubePacksInBlocksAndInChunks) {
  View V{{96, 80, 72}, {1, 96, 96 * 80}, 0};
  for (size_t ElemSize : {1u, 2u, 4u, 8u, 16u}) {
    std::vector<char> Src = numbered(96 * 80 * 72, ElemSize);
    std::vector<char> Want = byIndexWalk(V, Src.data(), ElemSize);
    for (size_t Chunk :
         {size_t(0), size_t(1) << 20, size_t(80 * 72) * ElemSize + ElemSize, ElemSize})
      EXPECT_EQ(packed(V, Src.data(), ElemSize, Chunk), Want)
          << "element size " << ElemSize << ", chunk " << Chunk;
  }
}

// A transposed view of 8 MiB or more packed whole goes around the cache
// (streaming stores) when its destination rows start on cache lines; a
// misaligned destination, or rows that end mid-line, take plain stores. The
// bytes are the same either way.
TEST(MemrefPackerTest, ALargeTransposedViewPacksAlignedOrNot) {
  for (int64_t Inner : {136, 130}) { // rows of 17 lines, and of 16.25
    View V{{64, 128, Inner}, {1, 64, 64 * 128}, 0};
    std::vector<char> Src = numbered(64 * 128 * size_t(Inner), 8);
    std::vector<char> Want = byIndexWalk(V, Src.data(), 8);
    for (size_t Shift : {0u, 8u})
      EXPECT_TRUE(packed(V, Src.data(), 8, 0, Shift) == Want)
          << "rows of " << Inner << " elements, " << Shift << " bytes past a line";
  }
}

// A send packs a transposed view in pieces of at least wholeLineBytes():
// 128 bytes' worth of elements of rows of the dimension the source holds
// closest together, each row as large as the view's inner dimensions. Views
// read in order need no such thing.
TEST(MemrefPackerTest, WholeLinesOfATransposedViewSpanTileRows) {
  auto wholeLines = [](const View &V, size_t ElemSize) {
    std::vector<char> Bytes(wire::MemrefDesc::byteSize(V.Sizes.size()));
    wire::MemrefDesc D(Bytes.data(), V.Sizes.size());
    char Any = 0;
    D.setAligned(&Any);
    for (size_t K = 0; K < V.Sizes.size(); ++K) {
      D.setSize(K, V.Sizes[K]);
      D.setStride(K, V.Strides[K]);
    }
    auto L = wire::layoutOf(D, ElemSize, {"input", 0});
    EXPECT_TRUE(bool(L)) << toString(L.takeError());
    return L ? wire::MemrefPacker(D, ElemSize, *L).wholeLineBytes() : 0;
  };
  EXPECT_EQ(wholeLines({{64, 64, 512}, {1, 64, 4096}, 0}, 8), 16u * 64 * 512 * 8);
  EXPECT_EQ(wholeLines({{64, 64, 512}, {1, 64, 4096}, 0}, 1), 64u * 64 * 512);
  // The closest dimension need not be the outermost, nor have 16 rows.
  EXPECT_EQ(wholeLines({{9, 3, 40}, {120, 1, 3}, 0}, 8), 3u * 40 * 8);
  EXPECT_EQ(wholeLines({{64, 512}, {512, 1}, 0}, 8), 0u);
  EXPECT_EQ(wholeLines({{64, 512}, {1024, 2}, 0}, 8), 0u);
  EXPECT_EQ(wholeLines({{5, 7, 3}, {0, 1, 0}, 0}, 8), 0u);
}

TEST(MemrefPackerTest, BroadcastDimensionsRepeatTheirElement) {
  View V{{5, 7, 3}, {0, 1, 0}, 2};
  std::vector<char> Src = numbered(9, 8);
  EXPECT_EQ(packed(V, Src.data(), 8, 24), byIndexWalk(V, Src.data(), 8));
  EXPECT_EQ(packed(V, Src.data(), 8, 0), byIndexWalk(V, Src.data(), 8));
}

// A dimension of size one is never stepped along: its stride may be any
// number at all, even one that would overflow if it were.
TEST(MemrefPackerTest, AUnitDimensionsStrideMeansNothing) {
  View V{{3, 1, 4}, {1, INT64_MAX / 2, 3}, 0};
  std::vector<char> Src = numbered(12, 4);
  EXPECT_EQ(packed(V, Src.data(), 4, 0), byIndexWalk(View{{3, 4}, {1, 3}, 0}, Src.data(), 4));
}

} // namespace
