//===- Memref.cpp - Memref descriptors and values for tests ---------------===//

#include "Memref.h"

#include <algorithm>
#include <sstream>

namespace catalyst::remote::test {

std::vector<int64_t> Desc::sizes() const {
  return std::vector<int64_t>(Slots.begin() + 3, Slots.begin() + 3 + Rank);
}

std::vector<int64_t> Desc::strides() const {
  return std::vector<int64_t>(Slots.begin() + 3 + Rank, Slots.end());
}

int64_t Desc::numElements() const {
  int64_t N = 1;
  for (size_t I = 0; I < Rank; ++I)
    N *= size(I);
  return N;
}

void Desc::poison(uint8_t Byte) {
  std::memset(Slots.data(), Byte, byteSize());
}

bool Desc::allZero() const {
  return std::all_of(Slots.begin(), Slots.end(), [](int64_t S) { return S == 0; });
}

std::vector<uint8_t> Desc::values() const {
  int64_t N = numElements();
  std::vector<uint8_t> Out(size_t(std::max<int64_t>(N, 0)) * ElemSize);
  std::vector<int64_t> Index(Rank, 0);
  const char *Base = static_cast<const char *>(aligned());
  for (int64_t E = 0; E < N; ++E) {
    int64_t Off = offset();
    for (size_t D = 0; D < Rank; ++D)
      Off += Index[D] * stride(D);
    std::memcpy(Out.data() + E * ElemSize, Base + Off * int64_t(ElemSize), ElemSize);
    for (size_t D = Rank; D-- > 0;) {
      if (++Index[D] < size(D))
        break;
      Index[D] = 0;
    }
  }
  return Out;
}

::testing::AssertionResult Desc::isDenseRowMajor() const {
  if (!allocated() || allocated() != aligned())
    return ::testing::AssertionFailure() << "allocated " << allocated() << " and aligned "
                                         << aligned() << " should be the same fresh buffer";
  if (offset() != 0)
    return ::testing::AssertionFailure() << "offset is " << offset() << ", expected 0";
  // With no elements, strides carry no meaning.
  if (numElements() > 0 && strides() != denseStrides(sizes()))
    return ::testing::AssertionFailure() << "strides " << describe(strides()) << " for sizes "
                                         << describe(sizes()) << " are not dense row-major";
  return ::testing::AssertionSuccess();
}

Buffer::Buffer(size_t Bytes)
    : Bytes(Bytes), Data(static_cast<char *>(std::aligned_alloc(64, (Bytes + 63) / 64 * 64 + 64))) {
}

void Buffer::randomize(std::mt19937_64 &Rng) {
  for (size_t I = 0; I < Bytes; ++I)
    Data.get()[I] = char(Rng());
}

const char *layoutName(Layout L) {
  switch (L) {
  case Layout::Dense:
    return "Dense";
  case Layout::Offset:
    return "Offset";
  case Layout::Strided:
    return "Strided";
  case Layout::Transposed:
    return "Transposed";
  case Layout::Broadcast:
    return "Broadcast";
  case Layout::Reversed:
    return "Reversed";
  case Layout::ZeroSize:
    return "ZeroSize";
  }
  return "?";
}

void PrintTo(Layout L, std::ostream *OS) {
  *OS << layoutName(L);
}

bool layoutApplies(Layout L, size_t Rank) {
  switch (L) {
  case Layout::Dense:
  case Layout::Offset:
    return true;
  case Layout::Transposed:
    return Rank >= 2;
  default:
    return Rank >= 1;
  }
}

std::vector<int64_t> denseStrides(const std::vector<int64_t> &Sizes) {
  std::vector<int64_t> S(Sizes.size());
  int64_t Stride = 1;
  for (size_t D = Sizes.size(); D-- > 0;) {
    S[D] = Stride;
    Stride *= std::max<int64_t>(Sizes[D], 1);
  }
  return S;
}

namespace {

// Offset and strides for layout L over logical Sizes.
void shape(Layout L, const std::vector<int64_t> &Sizes, int64_t &Offset,
           std::vector<int64_t> &Strides) {
  size_t R = Sizes.size();
  Strides = denseStrides(Sizes);
  Offset = 0;
  switch (L) {
  case Layout::Dense:
  case Layout::ZeroSize:
    break;
  case Layout::Offset:
    Offset = 5;
    break;
  case Layout::Strided: // every other element, rows padded by 3
    Offset = 1;
    for (size_t D = R; D-- > 0;)
      Strides[D] = D + 1 == R ? 2 : Strides[D + 1] * Sizes[D + 1] + 3;
    break;
  case Layout::Transposed: // column-major: the transpose of a dense buffer
    for (size_t D = 0; D < R; ++D)
      Strides[D] = D == 0 ? 1 : Strides[D - 1] * Sizes[D - 1];
    break;
  case Layout::Broadcast: // dimension 0 repeats one slice
    Strides[0] = 0;
    break;
  case Layout::Reversed: // every dimension walked back to front
    for (size_t D = 0; D < R; ++D) {
      Offset += (Sizes[D] - 1) * Strides[D];
      Strides[D] = -Strides[D];
    }
    break;
  }
}

// The element offsets Offset and Strides reach, lowest and highest.
void reach(const std::vector<int64_t> &Sizes, int64_t Offset, const std::vector<int64_t> &Strides,
           int64_t &Lo, int64_t &Hi) {
  Lo = Hi = Offset;
  for (size_t D = 0; D < Sizes.size(); ++D) {
    int64_t Extent = (std::max<int64_t>(Sizes[D], 1) - 1) * Strides[D];
    (Extent < 0 ? Lo : Hi) += Extent;
  }
}

} // namespace

std::unique_ptr<Input> makeInput(Layout L, std::vector<int64_t> Sizes, size_t ElemSize,
                                 std::mt19937_64 &Rng) {
  if (L == Layout::ZeroSize && !Sizes.empty())
    Sizes[Sizes.size() / 2] = 0;
  int64_t Offset, Lo, Hi;
  std::vector<int64_t> Strides;
  shape(L, Sizes, Offset, Strides);
  reach(Sizes, Offset, Strides, Lo, Hi);
  EXPECT_GE(Lo, 0) << "layout " << layoutName(L) << " reaches before its buffer";
  // Two spare elements past the end: reading beyond the view would pick up
  // random bytes and show up as a mismatch rather than a crash.
  auto In = std::make_unique<Input>(Sizes.size(), ElemSize, size_t(Hi + 3) * ElemSize);
  In->Buf.randomize(Rng);
  In->D.setAllocated(In->Buf.data());
  In->D.setAligned(In->Buf.data());
  In->D.setOffset(Offset);
  for (size_t D = 0; D < Sizes.size(); ++D) {
    In->D.setSize(D, Sizes[D]);
    In->D.setStride(D, Strides[D]);
  }
  return In;
}

std::unique_ptr<Input> makeDenseInput(const std::vector<int64_t> &Sizes, size_t ElemSize,
                                      const void *Bytes) {
  int64_t N = 1;
  for (int64_t S : Sizes)
    N *= S;
  auto In = std::make_unique<Input>(Sizes.size(), ElemSize, size_t(N) * ElemSize);
  if (N > 0)
    std::memcpy(In->Buf.data(), Bytes, size_t(N) * ElemSize);
  In->D.setAllocated(In->Buf.data());
  In->D.setAligned(In->Buf.data());
  auto Strides = denseStrides(Sizes);
  for (size_t D = 0; D < Sizes.size(); ++D) {
    In->D.setSize(D, Sizes[D]);
    In->D.setStride(D, Strides[D]);
  }
  return In;
}

std::string describe(const std::vector<int64_t> &V) {
  std::ostringstream S;
  S << "[";
  for (size_t I = 0; I < V.size(); ++I)
    S << (I ? ", " : "") << V[I];
  S << "]";
  return S.str();
}

std::vector<char> numbered(uint64_t Elems, size_t ElemSize) {
  std::vector<char> B(Elems * ElemSize);
  for (uint64_t I = 0; I < Elems; ++I)
    for (size_t K = 0; K < ElemSize; ++K)
      B[I * ElemSize + K] = char((I >> (8 * (K % 8))) + K);
  return B;
}

} // namespace catalyst::remote::test
