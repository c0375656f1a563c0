//===- LaunchPlan.h - Decoding a zero-copy launch request -------*- C++ -*-===//
//
// The plan of a zero-copy launch comes from the host and says where the
// payload that follows it goes: every count, shape and destination is
// checked before a byte of the payload is placed. Pure (bytes in, a checked
// plan or an error out) so that it can be fuzzed without a connection.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_LAUNCHPLAN_H
#define CATALYST_REMOTE_EXECUTOR_LAUNCHPLAN_H

#include "wire/Protocol.h"
#include "wire/Residents.h"
#include "wire/SourceOrder.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace catalyst::remote::executor {

struct LaunchPlan {
  llvm::orc::ExecutorAddr Entry;
  std::vector<wire::ZeroCopyInput> Inputs;
  std::vector<wire::LaunchOutputSpec> Outputs;
  // Inputs whose payload is in source order, by increasing index, checked.
  std::vector<wire::SourceOrdered> Reordered;
  std::vector<wire::SourceOrder> Orders; // Reordered's layouts
  // Inputs that are residents, and outputs to keep as residents
  // (wire/Residents.h): by increasing index, ids nonzero, checked.
  std::vector<wire::ResidentRef> ResidentInputs, KeptOutputs;
};

// Whether Bytes at P lie inside this session's slabs.
using SlabCheck = llvm::function_ref<bool(const char *P, uint64_t Bytes)>;

// Where a launch's input values come from: the payload that follows its
// plan, or a shared slab the host wrote them to before it sent the plan
// (a SharedLaunch, which has no payload).
enum class InputSource { Payload, InPlace };

// Decodes Plan, a zero-copy plan or one with residents, into Out
// (replacing what it held) and checks it against the PayloadBytes that
// follow it: input shapes consistent with their byte counts, destinations
// inside the slabs (InSlabs) and apart from each other, output ranks and
// element sizes, source orders; resident inputs with no destination and no
// bytes, kept outputs each under an id of its own. Whether the residents
// exist is the service's to check.
llvm::Error decodeLaunchPlan(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes, SlabCheck InSlabs,
                             LaunchPlan &Out, InputSource From = InputSource::Payload);

llvm::Error badLaunchRequest(const llvm::Twine &What);

} // namespace catalyst::remote::executor

#endif
