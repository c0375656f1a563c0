//===- Memref.h - Memref descriptors and values for tests -------*- C++ -*-===//
//
// Tests build descriptors of any rank and layout over buffers they own, and
// read values back through the descriptor's offset and strides. None of this
// uses the engine's own layout code, so a bug there cannot hide itself.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_MEMREF_H
#define CATALYST_REMOTE_TESTS_MEMREF_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace catalyst::remote::test {

inline constexpr uintptr_t ConstantMarker = 0xdeadbeef;

// A descriptor of any rank, in a vector<int64_t> backing store laid out as
// { allocated, aligned, offset, sizes[rank], strides[rank] }.
class Desc {
public:
  Desc(size_t Rank, size_t ElemSize) : Rank(Rank), ElemSize(ElemSize), Slots(3 + 2 * Rank, 0) {}

  void *data() { return Slots.data(); }
  const void *data() const { return Slots.data(); }
  size_t rank() const { return Rank; }
  size_t elemSize() const { return ElemSize; }
  size_t byteSize() const { return Slots.size() * sizeof(int64_t); }

  void *allocated() const { return reinterpret_cast<void *>(Slots[0]); }
  void *aligned() const { return reinterpret_cast<void *>(Slots[1]); }
  int64_t offset() const { return Slots[2]; }
  int64_t size(size_t I) const { return Slots[3 + I]; }
  int64_t stride(size_t I) const { return Slots[3 + Rank + I]; }
  std::vector<int64_t> sizes() const;
  std::vector<int64_t> strides() const;
  int64_t numElements() const;

  void setAllocated(const void *P) { Slots[0] = reinterpret_cast<int64_t>(P); }
  void setAligned(const void *P) { Slots[1] = reinterpret_cast<int64_t>(P); }
  void setOffset(int64_t V) { Slots[2] = V; }
  void setSize(size_t I, int64_t V) { Slots[3 + I] = V; }
  void setStride(size_t I, int64_t V) { Slots[3 + Rank + I] = V; }

  // Every slot set to Byte's pattern: a launch must overwrite all of them.
  void poison(uint8_t Byte = 0xab);
  bool allZero() const;

  // The values this descriptor describes, in row-major order.
  std::vector<uint8_t> values() const;

  // Does the descriptor point densely (row-major, offset 0) at a buffer of
  // its own? Says why not otherwise.
  ::testing::AssertionResult isDenseRowMajor() const;

private:
  size_t Rank;
  size_t ElemSize;
  std::vector<int64_t> Slots;
};

// Element memory for inputs, 64-byte aligned as MLIR allocates it.
class Buffer {
public:
  explicit Buffer(size_t Bytes);
  char *data() { return Data.get(); }
  size_t size() const { return Bytes; }
  // Fills with bytes from Rng: every element distinct with high probability.
  void randomize(std::mt19937_64 &Rng);

private:
  struct Free {
    void operator()(char *P) const { std::free(P); }
  };
  size_t Bytes;
  std::unique_ptr<char, Free> Data;
};

// How an input's descriptor walks its buffer.
enum class Layout { Dense, Offset, Strided, Transposed, Broadcast, Reversed, ZeroSize };
const char *layoutName(Layout L);
void PrintTo(Layout L, std::ostream *OS);
// Whether a layout means something at rank R (transposing needs two dims).
bool layoutApplies(Layout L, size_t Rank);

// An input memref: a descriptor over a buffer it owns.
struct Input {
  Input(size_t Rank, size_t ElemSize, size_t BufferBytes) : D(Rank, ElemSize), Buf(BufferBytes) {}
  Desc D;
  Buffer Buf;
};

// A Rank-dimensional input of the given logical Sizes laid out as L over a
// randomly filled buffer. Sizes are permuted as needed (e.g. a zero-size
// layout zeroes one dimension).
std::unique_ptr<Input> makeInput(Layout L, std::vector<int64_t> Sizes, size_t ElemSize,
                                 std::mt19937_64 &Rng);

// A dense row-major input holding exactly Bytes (Sizes' element count times
// ElemSize).
std::unique_ptr<Input> makeDenseInput(const std::vector<int64_t> &Sizes, size_t ElemSize,
                                      const void *Bytes);

// Typed convenience for dense inputs.
template <typename T>
std::unique_ptr<Input> makeDenseInput(const std::vector<int64_t> &Sizes,
                                      const std::vector<T> &Values) {
  return makeDenseInput(Sizes, sizeof(T), Values.data());
}

// Reinterprets value bytes as Ts.
template <typename T> std::vector<T> as(const std::vector<uint8_t> &Bytes) {
  std::vector<T> Out(Bytes.size() / sizeof(T));
  if (!Out.empty())
    std::memcpy(Out.data(), Bytes.data(), Out.size() * sizeof(T));
  return Out;
}

// Row-major element strides of Sizes, zero-size dimensions counted as 1.
std::vector<int64_t> denseStrides(const std::vector<int64_t> &Sizes);

std::string describe(const std::vector<int64_t> &V);

// Elems elements of ElemSize bytes, element I holding the bytes of I, so
// that a misplaced element cannot pass for another.
std::vector<char> numbered(uint64_t Elems, size_t ElemSize);

} // namespace catalyst::remote::test

#endif
