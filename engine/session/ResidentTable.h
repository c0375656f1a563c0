//===- ResidentTable.h - What a session keeps in its executor ---*- C++ -*-===//
//
// The host's record of a session's residents (catalyst/remote/Resident.h):
// which ids it gave out, and the shape of each the executor still keeps.
// It checks every handle a caller passes before a byte is sent, so that an
// id never reaches the executor unless this session made it and has not
// released it.
//
//   ResidentTable T;
//   uint64_t Id = T.nextId();
//   ... the executor keeps Id ...
//   Resident R = T.add(Id, Shape);
//   auto In = T.input(R, Arg, 2);   // a CheckedInput naming it, or why not
//   T.remove(R);
//
// Thread safety: none; a session uses its table in its launch turn
// (LaunchMutex).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_RESIDENTTABLE_H
#define CATALYST_REMOTE_SESSION_RESIDENTTABLE_H

#include "../transfer/Transfer.h"
#include "ResidentAccess.h"
#include "catalyst/remote/Launch.h"
#include "catalyst/remote/Resident.h"
#include "wire/Residents.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace catalyst::remote {

class ResidentTable {
public:
  // Each table a serial number of its own in this process, which its
  // handles carry.
  ResidentTable();

  // An id for the next resident; never given out again.
  uint64_t nextId() { return NextId++; }
  // Records Id, which the executor now keeps in Shape, and returns its
  // handle.
  Resident add(uint64_t Id, const wire::TensorShape &Shape);
  // R, passed as Arg for input Index: a CheckedInput that names it, or a
  // BadArgument failure saying why R cannot be used here (another
  // session's, released, empty, or not of Arg's element size and rank).
  llvm::Expected<CheckedInput> input(const Resident &R, const MemrefArg &Arg, size_t Index);
  // R's id, when this table holds it; else a BadArgument failure, What
  // naming R for it ("the resident to release").
  llvm::Expected<uint64_t> held(const Resident &R, const llvm::Twine &What) const;
  // The shape of Id, which the table holds.
  const wire::TensorShape &shapeOf(uint64_t Id) const { return Held.at(Id).Shape; }
  void remove(uint64_t Id);
  size_t size() const { return Held.size(); }
  // The bytes of the residents held.
  uint64_t heldBytes() const { return HeldBytes; }

private:
  struct Record {
    wire::TensorShape Shape;
    // A descriptor of Shape over no buffer (wire::MemrefDesc's layout),
    // which gives a resident input's shape to a strategy.
    std::vector<int64_t> Desc;
  };

  uint64_t Owner;
  uint64_t NextId = 1;
  uint64_t HeldBytes = 0;
  // Node-based: a launch's CheckedInputs point into records.
  std::unordered_map<uint64_t, Record> Held;
};

} // namespace catalyst::remote

#endif
