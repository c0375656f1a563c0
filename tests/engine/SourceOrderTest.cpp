//===- SourceOrderTest.cpp - Transposes unpacked as their rows land -------===//
//
// A transposed view of a dense array travels as the array (wire/
// SourceOrder.h): the receiver unpacks it a chunk of the array's rows at a
// time. Every element must land where a plain index walk of the view puts
// it, whatever the permutation, element size and chunk; and the receiver
// must refuse layouts that are not a permutation of a dense array.
//
//===----------------------------------------------------------------------===//

#include "wire/SourceOrder.h"

#include "Memref.h"

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

struct Free {
  void operator()(char *P) const { std::free(P); }
};
using Buffer = std::unique_ptr<char, Free>;

Buffer lineAligned(size_t Bytes) {
  return Buffer(static_cast<char *>(std::aligned_alloc(64, (Bytes + 63) / 64 * 64)));
}

// A random transpose of a dense array of Dims: the view's dimension K is the
// array's dimension Perm[K].
struct Transpose {
  std::vector<int64_t> Sizes, Strides;
  uint64_t Elements = 1;
};

Transpose transposeOf(const std::vector<int64_t> &Dims, std::vector<size_t> Perm) {
  std::vector<int64_t> ArrayStride(Dims.size());
  int64_t S = 1;
  for (size_t K = Dims.size(); K-- > 0;) {
    ArrayStride[K] = S;
    S *= Dims[K];
  }
  Transpose T;
  for (size_t P : Perm) {
    T.Sizes.push_back(Dims[P]);
    T.Strides.push_back(ArrayStride[P]);
    T.Elements *= uint64_t(Dims[P]);
  }
  return T;
}

// The view's values in row-major order, read element by element.
std::vector<char> byIndexWalk(const Transpose &T, const char *Src, size_t ElemSize) {
  std::vector<char> Out(T.Elements * ElemSize);
  std::vector<int64_t> Index(T.Sizes.size(), 0);
  for (uint64_t E = 0; E < T.Elements; ++E) {
    int64_t Off = 0;
    for (size_t K = 0; K < Index.size(); ++K)
      Off += Index[K] * T.Strides[K];
    std::memcpy(&Out[E * ElemSize], Src + Off * int64_t(ElemSize), ElemSize);
    for (size_t K = Index.size(); K-- > 0 && ++Index[K] == T.Sizes[K];)
      Index[K] = 0;
  }
  return Out;
}

// Unpacks the array at Src as a receiver does: its rows chunk by chunk,
// each chunk copied out of a buffer of its own.
std::vector<char> unpacked(const wire::SourceOrder &O, const char *Src) {
  Buffer Dst = lineAligned(O.bytes());
  Buffer Chunk = lineAligned(size_t(O.chunkRows()) * O.rowBytes());
  for (int64_t Row = 0; Row < O.rows(); Row += O.chunkRows()) {
    int64_t N = std::min(O.chunkRows(), O.rows() - Row);
    std::memcpy(Chunk.get(), Src + Row * int64_t(O.rowBytes()), size_t(N) * O.rowBytes());
    O.unpack(Row, N, Chunk.get(), Dst.get());
  }
  return std::vector<char>(Dst.get(), Dst.get() + O.bytes());
}

void expectUnpacksRight(const std::vector<int64_t> &Dims, const std::vector<size_t> &Perm,
                        size_t ElemSize) {
  Transpose T = transposeOf(Dims, Perm);
  auto O = wire::SourceOrder::of(T.Sizes, T.Strides, ElemSize, {"input", 0});
  ASSERT_TRUE(bool(O)) << toString(O.takeError());
  EXPECT_EQ(O->bytes(), T.Elements * ElemSize);
  EXPECT_LE(uint64_t(O->chunkRows()) * O->rowBytes(),
            std::max<uint64_t>(O->rowBytes(), wire::SourceOrder::MaxRowBytes));
  std::vector<char> Array = numbered(T.Elements, ElemSize);
  EXPECT_TRUE(unpacked(*O, Array.data()) == byIndexWalk(T, Array.data(), ElemSize));
}

TEST(SourceOrderTest, RandomTransposesUnpackAsAnIndexWalkReadsThem) {
  std::mt19937_64 Rng(11);
  const size_t ElemSizes[] = {1, 2, 3, 4, 8, 16};
  for (int Case = 0; Case < 200; ++Case) {
    size_t Rank = 2 + Rng() % 3;
    std::vector<int64_t> Dims;
    for (size_t K = 0; K < Rank; ++K)
      Dims.push_back(int64_t(1 + Rng() % (Rank == 2 ? 70 : 19)));
    std::vector<size_t> Perm(Rank);
    std::iota(Perm.begin(), Perm.end(), 0);
    std::shuffle(Perm.begin(), Perm.end(), Rng);
    size_t ElemSize = ElemSizes[Rng() % std::size(ElemSizes)];
    SCOPED_TRACE("case " + std::to_string(Case));
    expectUnpacksRight(Dims, Perm, ElemSize);
  }
}

// Views of 8 MiB and more write around the cache, in chunks of rows whose
// first row starts on a line; rows long enough to need a chunk each.
TEST(SourceOrderTest, LargeTransposesStreamAndLongRowsComeAlone) {
  expectUnpacksRight({512, 64, 32}, {2, 1, 0}, 8); // 8 MiB, the benchmark's shape
  expectUnpacksRight({24, 1 << 15}, {1, 0}, 4);    // rows of 128 KiB
  expectUnpacksRight({3, 1 << 20}, {1, 0}, 8);     // rows of 8 MiB
}

::testing::AssertionResult refusedSaying(std::vector<int64_t> Sizes, std::vector<int64_t> Strides,
                                         const std::string &Says) {
  auto O = wire::SourceOrder::of(Sizes, Strides, 8, {"input", 3});
  if (O)
    return ::testing::AssertionFailure() << "accepted";
  std::string Msg = toString(O.takeError());
  if (Msg.find("input 3 in source order: " + Says) == std::string::npos)
    return ::testing::AssertionFailure() << "said '" << Msg << "'";
  return ::testing::AssertionSuccess();
}

TEST(SourceOrderTest, LayoutsThatAreNoPermutationOfADenseArrayAreRefused) {
  const char *NotPermutation = "strides are not a permutation of a dense array's";
  EXPECT_TRUE(refusedSaying({int64_t(1) << 32, int64_t(1) << 32}, {1, int64_t(1) << 32},
                            "element count overflows"));
  EXPECT_TRUE(refusedSaying({4, 8}, {1, 5}, NotPermutation));
  EXPECT_TRUE(refusedSaying({4, 8}, {1, 1}, NotPermutation));
  EXPECT_TRUE(refusedSaying({4, 8}, {2, 8}, NotPermutation));
  EXPECT_TRUE(refusedSaying({4, 8}, {0, 4}, "dimension 0 has stride 0"));
  EXPECT_TRUE(refusedSaying({4, 8}, {1, -4}, "dimension 1 has stride -4"));
  EXPECT_TRUE(refusedSaying({4, 0}, {1, 4}, "dimension 1 has size 0"));
  EXPECT_TRUE(refusedSaying({4, 8}, {1}, "rank or element size out of range"));
  EXPECT_TRUE(refusedSaying({1, 1}, {5, 7}, "a single element has no order"));
  EXPECT_TRUE(refusedSaying({int64_t(1) << 31, int64_t(1) << 31}, {1, int64_t(1) << 31},
                            "byte size overflows"));
  EXPECT_TRUE(refusedSaying({4, 3 << 20}, {3 << 20, 1}, "rows of 25165824 bytes, above 16777216"));
  // A dimension of size 1 may have any stride: it means nothing.
  EXPECT_TRUE(bool(wire::SourceOrder::of({4, 1, 8}, {1, -99, 4}, 8, {"input", 0})));
}

// A sender sends in source order only what the packer would tile: the
// transposes of a dense span, not dense views, runs, gaps or broadcasts.
TEST(SourceOrderTest, OnlyTransposesOfTheirSpanAreWorthSending) {
  std::vector<char> Array(8 * 4 * 8);
  auto Worth = [&](int64_t Offset, std::vector<int64_t> Sizes, std::vector<int64_t> Strides) {
    std::vector<int64_t> Words = {0, 0, Offset};
    Words.insert(Words.end(), Sizes.begin(), Sizes.end());
    Words.insert(Words.end(), Strides.begin(), Strides.end());
    wire::MemrefDesc D(Words.data(), Sizes.size());
    D.setAllocated(Array.data());
    D.setAligned(Array.data());
    auto L = wire::layoutOf(D, 8, {"input", 0});
    EXPECT_TRUE(bool(L));
    return L && wire::SourceOrder::worthSending(D, 8, *L).has_value();
  };
  EXPECT_TRUE(Worth(0, {4, 8}, {1, 4}));
  EXPECT_TRUE(Worth(0, {4, 8, 1}, {1, 4, 77}));
  EXPECT_FALSE(Worth(0, {8, 4}, {4, 1}));       // dense
  EXPECT_FALSE(Worth(0, {4, 4}, {1, 8}));       // a gap
  EXPECT_FALSE(Worth(0, {4, 8}, {0, 1}));       // a broadcast
  EXPECT_FALSE(Worth(0, {2, 4, 4}, {4, 8, 1})); // runs of adjacent elements
  EXPECT_FALSE(Worth(31, {4, 8}, {-1, -4}));    // reversed
}

} // namespace
