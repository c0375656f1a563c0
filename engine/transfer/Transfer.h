//===- Transfer.h - How a launch moves memrefs to and from the executor -*- C++ -*-===//
//
// A transfer strategy owns the wire side of one launch: it moves the
// validated inputs, runs the entry on the executor, and fills HostOutputs.
// Strategies differ only in round trips and copies, never in results.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_TRANSFER_H
#define CATALYST_REMOTE_TRANSFER_TRANSFER_H

#include "HostOutputs.h"
#include "LaunchTimeline.h"
#include "catalyst/remote/Stats.h"
#include "wire/MemrefLayout.h"

#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"

#include <vector>

namespace catalyst::remote {

// An input whose descriptor has been validated on the host. A resident
// input (Resident, its id, not 0) has an empty layout, since none of its
// values travel, and a descriptor that gives its shape alone.
struct CheckedInput {
  wire::MemrefDesc Desc;
  size_t ElemSize;
  wire::MemrefLayout Layout;
  uint64_t Resident = 0;
};

class ResidentRequests;

class Transfer {
public:
  virtual ~Transfer();
  virtual const char *name() const = 0;
  // Runs one launch; adds what it measured to Stats (round trips, messages
  // and bytes are counted by the session) and notes in When when its
  // phases began.
  virtual llvm::Error launch(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<CheckedInput> Inputs,
                             HostOutputs &Outputs, LaunchStats &Stats, LaunchTimeline &When) = 0;
  // The largest message this strategy would send for Inputs: the session
  // refuses a launch whose message could not go, before any traffic.
  // By default, one message carrying them all (messageCarrying()).
  virtual uint64_t largestRequest(llvm::ArrayRef<CheckedInput> Inputs) const;
  // What a message carrying Inputs' descriptors needs besides their bytes.
  static uint64_t framingFor(llvm::ArrayRef<CheckedInput> Inputs);
  // A message carrying every input's bytes, with framingFor() besides.
  static uint64_t messageCarrying(llvm::ArrayRef<CheckedInput> Inputs);
  // The resident requests this strategy makes, when it and its executor
  // keep residents: then its launches take resident inputs too. Null by
  // default.
  virtual ResidentRequests *residents() { return nullptr; }
  // Returns what the strategy holds on the executor; called while connected.
  virtual llvm::Error close() { return llvm::Error::success(); }
};

} // namespace catalyst::remote

#endif
