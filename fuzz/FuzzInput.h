//===- FuzzInput.h - What the fuzz targets read their input with -*- C++ -*-===//
//
// A fuzz input is read front to back: fixed-size fields in little-endian
// order, then byte strings; past its end every field reads as zero, so any
// input is a valid one. MakeSeeds.cpp writes seeds in the same order.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_FUZZ_FUZZINPUT_H
#define CATALYST_REMOTE_FUZZ_FUZZINPUT_H

#include "catalyst/remote/Launch.h"
#include "wire/MemrefLayout.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace catalyst::remote::fuzz {

class FuzzInput {
public:
  FuzzInput(const uint8_t *Data, size_t Size)
      : P(reinterpret_cast<const char *>(Data)), Left(Size) {}

  template <typename T> T take() {
    T V{};
    size_t N = std::min(sizeof(T), Left);
    std::memcpy(&V, P, N);
    P += N;
    Left -= N;
    return V;
  }
  llvm::ArrayRef<char> bytes(size_t N) {
    N = std::min(N, Left);
    llvm::ArrayRef<char> B(P, N);
    P += N;
    Left -= N;
    return B;
  }
  llvm::ArrayRef<char> rest() { return bytes(Left); }

private:
  const char *P;
  size_t Left;
};

inline constexpr size_t FuzzElemSizes[] = {1, 2, 4, 8, 16, 3};

// A launch's outputs: a count (up to 4), then for each a rank (up to 4) and
// an element size (an index into FuzzElemSizes); descriptors to receive them.
struct FuzzOutputs {
  std::vector<std::vector<char>> Descs;
  std::vector<MemrefArg> Args;
};

inline FuzzOutputs takeOutputs(FuzzInput &In) {
  FuzzOutputs O;
  size_t N = In.take<uint8_t>() % 5;
  O.Descs.resize(N);
  for (size_t I = 0; I < N; ++I) {
    size_t Rank = In.take<uint8_t>() % 5;
    size_t Elem = FuzzElemSizes[In.take<uint8_t>() % std::size(FuzzElemSizes)];
    O.Descs[I].resize(wire::MemrefDesc::byteSize(Rank));
    O.Args.push_back({O.Descs[I].data(), Rank, Elem});
  }
  return O;
}

// Packing is exercised on spans and outputs up to this size; larger ones
// are only checked (the host would allocate them, which is not the subject).
inline constexpr uint64_t MaxPackedBytes = 1 << 20;

} // namespace catalyst::remote::fuzz

#endif
