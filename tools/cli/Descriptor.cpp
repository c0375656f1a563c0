//===- Descriptor.cpp - Memref descriptors the tool hands the engine ------===//

#include "Descriptor.h"

namespace catalyst::remote::cli {

Descriptor Descriptor::of(const NpyArray &A) {
  size_t Rank = A.Shape.size();
  Descriptor D(Rank);
  D.Slots[0] = D.Slots[1] = reinterpret_cast<int64_t>(A.Data.data());
  int64_t *Sizes = &D.Slots[3], *Strides = &D.Slots[3 + Rank];
  // Dense either way: the last index moves fastest in C order, the first
  // in Fortran order. An empty dimension counts as one, which keeps every
  // stride positive and in range.
  int64_t Stride = 1;
  for (size_t K = 0; K < Rank; ++K) {
    size_t Dim = A.FortranOrder ? K : Rank - 1 - K;
    Sizes[Dim] = A.Shape[Dim];
    Strides[Dim] = Stride;
    Stride *= std::max<int64_t>(A.Shape[Dim], 1);
  }
  return D;
}

} // namespace catalyst::remote::cli
