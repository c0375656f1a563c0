//===- Descriptor.h - Memref descriptors the tool hands the engine -*- C++ -*-===//
//
// { allocated, aligned, offset, sizes[rank], strides[rank] }, strides in
// elements. An input's describes the file's values where they lie: a
// Fortran-order array is passed with column-major strides, not copied into
// C order on the host.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_DESCRIPTOR_H
#define CATALYST_REMOTE_CLI_DESCRIPTOR_H

#include "Npy.h"
#include "catalyst/remote/Launch.h"

#include <cstdint>
#include <vector>

namespace catalyst::remote::cli {

class Descriptor {
public:
  // Zeroed, for an output the launch fills in.
  explicit Descriptor(size_t Rank) : Rank(Rank), Slots(3 + 2 * Rank, 0) {}

  // Over A's values, which must outlive the launch.
  static Descriptor of(const NpyArray &A);

  MemrefArg arg(size_t ElemSize) { return {Slots.data(), Rank, ElemSize}; }
  char *allocated() const { return reinterpret_cast<char *>(Slots[0]); }
  std::vector<int64_t> sizes() const { return {Slots.begin() + 3, Slots.begin() + 3 + Rank}; }

private:
  size_t Rank;
  std::vector<int64_t> Slots;
};

} // namespace catalyst::remote::cli

#endif
