//===- Resident.h - A tensor kept in the executor ---------------*- C++ -*-===//
//
// A resident is a copy of a tensor that an executor keeps for the session
// that put it there (Session::upload), so that launches read it where it
// is instead of sending its values again: a sweep over one large constant
// sends the constant once.
//
//   auto R = S.upload(Weights);                         // values cross once
//   MemrefArg In[] = {MemrefArg::of(*R), Params};
//   for (...) S.launch({"sweep", "k.o", In, Out});      // Params alone cross
//   S.release(*R);
//
// A Resident is a handle: copying it copies the name, not the tensor. It
// stays usable in the session that made it until that session releases it
// or closes; the executor frees what a session kept when its connection
// ends. Another session's handle, a released one (or a copy of one
// released) and an empty one are refused, naming the argument.
//
// Layout: an upload is kept dense in row-major order. A strided, offset or
// transposed memref is compacted as it is sent, so a kernel given the
// resident sees a dense row-major memref of the uploaded shape, whatever
// strides the uploaded descriptor had.
//
// Thread safety: a plain value.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_RESIDENT_H
#define CATALYST_REMOTE_RESIDENT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace catalyst::remote {

class Resident {
public:
  // Names nothing: usable nowhere.
  Resident() = default;

  // Whether the handle names a resident (it may have been released since,
  // through a copy).
  explicit operator bool() const { return Id != 0; }
  // Unique in its session, never 0.
  uint64_t id() const { return Id; }
  size_t elemSize() const { return ElemSize; }
  size_t rank() const { return Shape.size(); }
  llvm::ArrayRef<int64_t> shape() const { return Shape; }
  // What the executor holds: the element count times the element size.
  uint64_t bytes() const { return Bytes; }

private:
  // The engine makes handles; nothing else can.
  friend struct ResidentAccess;

  uint64_t Owner = 0; // the session's serial number in this process
  uint64_t Id = 0;
  size_t ElemSize = 0;
  std::vector<int64_t> Shape;
  uint64_t Bytes = 0;
};

} // namespace catalyst::remote

#endif
