//===- ResidentAccess.h - Who may make resident handles ---------*- C++ -*-===//
//
// A Resident (catalyst/remote/Resident.h) is a handle only the engine
// makes, so that a caller cannot forge one. Its makers are a session's
// ResidentTable and a pool (engine/pool/PoolResidents.cpp), which hands
// out handles of its own for what its members keep. Each maker has a
// serial number, its owner, which its handles carry: a maker takes back
// only handles with its own.
//
//   uint64_t Owner = ResidentAccess::newOwner();
//   Resident R = ResidentAccess::make(Owner, Id, Shape);
//   if (ResidentAccess::owner(R) != Owner) ... // another maker's
//
// The only part of session/ that pool/ may use.
//
// Thread safety: every function may run on any thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_SESSION_RESIDENTACCESS_H
#define CATALYST_REMOTE_SESSION_RESIDENTACCESS_H

#include "catalyst/remote/Resident.h"
#include "wire/Residents.h"

#include <cstdint>

namespace catalyst::remote {

struct ResidentAccess {
  // A serial number no maker in this process had.
  static uint64_t newOwner();
  static Resident make(uint64_t Owner, uint64_t Id, const wire::TensorShape &Shape);
  static uint64_t owner(const Resident &R) { return R.Owner; }
};

} // namespace catalyst::remote

#endif
