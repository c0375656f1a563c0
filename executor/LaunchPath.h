//===- LaunchPath.h - How a zero-copy launch's bytes come and go -*- C++ -*-===//
//
// The executor's side of the host's PayloadPath (engine/transfer/
// PayloadPath.h). A zero-copy launch's inputs and outputs travel one of two
// ways, chosen by the message that brings the launch:
//
//   SocketLaunchPath  a Launch: the inputs follow the plan in the message,
//                     read straight into the session's slabs, and the
//                     outputs go back in the result's payload, straight
//                     from the kernel's buffers.
//   SharedLaunchPath  a SharedLaunch, on the local socket: the host wrote
//                     the inputs into shared slabs before it sent the plan,
//                     and the outputs are left in shared memory
//                     (SharedSlabs::placeOutputs) for the host to read.
//
// ZeroCopyService owns one of each and picks one per launch; the paths hold
// no state of a launch. Used on the connection's reader thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_LAUNCHPATH_H
#define CATALYST_REMOTE_EXECUTOR_LAUNCHPATH_H

#include "LaunchPlan.h"
#include "SharedSlabs.h"
#include "Slabs.h"
#include "wire/SocketTransport.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace catalyst::remote::executor {

class LaunchPath {
public:
  virtual ~LaunchPath() = default;

  // Where the launch's input values come from (LaunchPlan.h).
  virtual InputSource inputs() const = 0;
  // Whether an input's Bytes at P lie where this path's inputs may be.
  virtual bool holds(const Slabs::Held &InSlabs, const char *P, uint64_t Bytes) const = 0;

  // The result plan, given the bytes the executor copied or packed.
  using PlanFor = llvm::function_ref<std::vector<char>(uint64_t CopyBytes)>;
  // Sends a launch's result: its outputs as Parts, Packed the bytes packed
  // so far. On error, nothing of the result was sent unless the transport
  // says it is disconnected.
  virtual llvm::Error sendResult(wire::SocketTransport &T, uint64_t SeqNo,
                                 llvm::ArrayRef<wire::PayloadPart> Parts, uint64_t Packed,
                                 PlanFor Plan) = 0;
};

class SocketLaunchPath final : public LaunchPath {
public:
  InputSource inputs() const override { return InputSource::Payload; }
  bool holds(const Slabs::Held &InSlabs, const char *P, uint64_t Bytes) const override {
    return InSlabs.contains(P, Bytes);
  }
  llvm::Error sendResult(wire::SocketTransport &T, uint64_t SeqNo,
                         llvm::ArrayRef<wire::PayloadPart> Parts, uint64_t Packed,
                         PlanFor Plan) override;
};

class SharedLaunchPath final : public LaunchPath {
public:
  // Shared outlives this (both the connection's).
  explicit SharedLaunchPath(SharedSlabs &Shared) : Shared(Shared) {}

  InputSource inputs() const override { return InputSource::InPlace; }
  bool holds(const Slabs::Held &InSlabs, const char *P, uint64_t Bytes) const override {
    return InSlabs.containsShared(P, Bytes);
  }
  llvm::Error sendResult(wire::SocketTransport &T, uint64_t SeqNo,
                         llvm::ArrayRef<wire::PayloadPart> Parts, uint64_t Packed,
                         PlanFor Plan) override;

private:
  SharedSlabs &Shared;
  std::vector<llvm::orc::ExecutorAddr> Where; // per output, kept from launch to launch
};

// The bytes of Parts, together.
uint64_t outputBytes(llvm::ArrayRef<wire::PayloadPart> Parts);

} // namespace catalyst::remote::executor

#endif
