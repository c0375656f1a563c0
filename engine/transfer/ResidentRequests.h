//===- ResidentRequests.h - The round trips of resident tensors -*- C++ -*-===//
//
// What a session asks of its executor about residents (wire/Residents.h):
// upload, fetch and release, one round trip each. A strategy offers this
// when it and its executor keep residents (Transfer::residents()); the
// zero-copy strategy does.
//
// Threads: called by the launching thread, in the session's launch turn
// (LaunchMutex), like a launch.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_RESIDENTREQUESTS_H
#define CATALYST_REMOTE_TRANSFER_RESIDENTREQUESTS_H

#include "catalyst/remote/Stats.h"
#include "wire/Framing.h"
#include "wire/Residents.h"
#include "wire/SocketTransport.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace catalyst::remote {

class ResidentRequests {
public:
  virtual ~ResidentRequests();
  // Sends one resident request, OpC its opcode (Upload, Fetch, Release),
  // with its Plan and payload Parts, and waits for the executor's reply: a
  // transport failure is an error, the executor's refusal the reply's
  // Error. A Fetch's values land in Into, which must be exactly their
  // size (a reply of another size is refused and the connection ends).
  virtual llvm::Expected<wire::ResidentReply> request(wire::PayloadOpcode OpC,
                                                      llvm::ArrayRef<char> Plan,
                                                      llvm::ArrayRef<wire::PayloadPart> Parts,
                                                      LaunchStats &Stats,
                                                      llvm::MutableArrayRef<char> Into = {}) = 0;
};

} // namespace catalyst::remote

#endif
