//===- ResidentAccess.cpp - Who may make resident handles -----------------===//

#include "ResidentAccess.h"

#include <atomic>

namespace catalyst::remote {

namespace {

// Serial numbers of makers, so that a handle names its maker even after
// another takes the first one's address.
std::atomic<uint64_t> NextOwner{1};

} // namespace

uint64_t ResidentAccess::newOwner() {
  return NextOwner.fetch_add(1, std::memory_order_relaxed);
}

Resident ResidentAccess::make(uint64_t Owner, uint64_t Id, const wire::TensorShape &Shape) {
  Resident R;
  R.Owner = Owner;
  R.Id = Id;
  R.ElemSize = Shape.ElemSize;
  R.Shape.assign(Shape.Sizes.begin(), Shape.Sizes.end());
  R.Bytes = Shape.Bytes;
  return R;
}

} // namespace catalyst::remote
