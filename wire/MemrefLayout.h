//===- MemrefLayout.h - What a memref descriptor describes ------*- C++ -*-===//
//
// A memref descriptor is { void *allocated; void *aligned; int64_t offset;
// int64_t sizes[rank]; int64_t strides[rank]; }. Strides count elements and
// may be anything: transposes, zero for broadcast, padding, negative. Both
// ends of a session use this to size, validate and pack the values a
// descriptor describes; every product is checked for overflow, since a
// descriptor can come from a peer.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_MEMREFLAYOUT_H
#define CATALYST_REMOTE_WIRE_MEMREFLAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace catalyst::remote::wire {

// Marks a memref that points at a constant global (MLIR's convention); never
// freed by anyone.
inline constexpr uintptr_t ConstantGlobalMarker = 0xdeadbeef;

inline constexpr size_t MaxRank = 64;

// A view of a descriptor laid out in memory; owns nothing.
class MemrefDesc {
public:
  MemrefDesc(void *Base, size_t Rank) : Base(static_cast<char *>(Base)), Rank(Rank) {}

  static constexpr size_t byteSize(size_t Rank) { return (3 + 2 * Rank) * sizeof(int64_t); }

  size_t rank() const { return Rank; }
  void *base() const { return Base; }
  void *allocated() const { return loadPtr(0); }
  void *aligned() const { return loadPtr(1); }
  int64_t offset() const { return load(2); }
  int64_t size(size_t I) const { return load(3 + I); }
  int64_t stride(size_t I) const { return load(3 + Rank + I); }

  void setAllocated(void *P) { storePtr(0, P); }
  void setAligned(void *P) { storePtr(1, P); }
  void setOffset(int64_t V) { store(2, V); }
  void setSize(size_t I, int64_t V) { store(3 + I, V); }
  void setStride(size_t I, int64_t V) { store(3 + Rank + I, V); }

  // Points the descriptor at a dense row-major buffer holding its values.
  void rewriteDense(void *Buffer);
  // Gives the descriptor Sizes (one per dimension) and points it at a dense
  // row-major buffer of that shape.
  void describeDense(llvm::ArrayRef<int64_t> Sizes, void *Buffer);

private:
  int64_t load(size_t Slot) const {
    int64_t V;
    std::memcpy(&V, Base + Slot * 8, 8);
    return V;
  }
  void store(size_t Slot, int64_t V) { std::memcpy(Base + Slot * 8, &V, 8); }
  void *loadPtr(size_t Slot) const {
    void *P;
    std::memcpy(&P, Base + Slot * 8, 8);
    return P;
  }
  void storePtr(size_t Slot, void *P) { std::memcpy(Base + Slot * 8, &P, 8); }

  char *Base;
  size_t Rank;
};

// The values a descriptor describes, as element offsets from `aligned`.
struct MemrefLayout {
  uint64_t Elements = 0;
  uint64_t Bytes = 0;       // Elements * element size: the dense copy.
  bool Dense = false;       // Row-major without gaps: one memcpy moves it.
  int64_t FirstElement = 0; // Lowest element offset touched (offset included).
  uint64_t SpanBytes = 0;   // Bytes from the lowest to past the highest element.
};

// Names a memref in errors ("input 2") without building a string until one
// is needed: layouts are computed on every launch.
struct MemrefName {
  const char *Role;
  size_t Index;
};

// Validates D (non-negative sizes, no overflow, a pointer when non-empty)
// and computes its layout.
llvm::Expected<MemrefLayout> layoutOf(const MemrefDesc &D, size_t ElemSize, MemrefName Name);

// Copies the values D describes, in row-major order, into bounded chunks:
// each pack() call fills as much of the destination as it can and resumes
// where the previous one stopped. Nothing is allocated.
class MemrefPacker {
public:
  MemrefPacker(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L);

  size_t pack(char *Dst, size_t Capacity);
  bool done() const { return Remaining == 0; }

  // For a transposed view, the destination bytes a pack() call needs to
  // read every source line it touches whole: as many rows of the dimension
  // the source holds closest together as two tiles have columns (128 bytes
  // of each source row, the pair of lines the processor fetches together).
  // Smaller calls read lines again; a call given the whole view reads it in
  // source order, faster again (pack/transposed/<size>, PackBench). Zero for
  // other views, which
  // read lines in order.
  uint64_t wholeLineBytes() const { return WholeLineBytes; }

private:
  const char *runStart() const;
  void advanceRun();
  uint64_t nextBlock(size_t Capacity, size_t &Dim, int64_t &Rows) const;
  size_t packBlock(char *Dst, size_t Dim, int64_t Rows);

  const char *Data;
  size_t ElemSize;
  size_t OuterRank = 0; // Dims iterated one index at a time.
  int64_t Sizes[MaxRank] = {};
  int64_t Strides[MaxRank] = {};
  int64_t Index[MaxRank] = {};
  uint64_t RunElems = 1; // Elements of the innermost collapsed run.
  int64_t RunStride = 1; // Element stride inside the run.
  uint64_t InRun = 0;    // Elements of the current run already copied.
  // Some outer dimension's stride is smaller than the run's: reading runs
  // one by one would take a cache miss per element.
  bool Transposed = false;
  uint64_t WholeLineBytes = 0;
  uint64_t Remaining = 0;
};

// Packs all of D into Dst, which holds at least L.Bytes.
void packAll(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L, char *Dst);

} // namespace catalyst::remote::wire

#endif
