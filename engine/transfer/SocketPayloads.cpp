//===- SocketPayloads.cpp - Launch values in the messages themselves ------===//
//
// PayloadPath.h's socket path: a launch's input values follow its plan in
// the launch message, by scatter-gather from the caller's buffers, and a
// result's output values are read from the socket straight into the host
// buffers that receive them. Holds nothing between calls.
//
//===----------------------------------------------------------------------===//

#include "PayloadPath.h"
#include "wire/Protocol.h"

#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

PayloadPath::~PayloadPath() = default;

namespace {

class SocketPayloads final : public PayloadPath {
public:
  const char *reserverName() const override { return wire::SlabsInstanceName; }
  const char *reserveName() const override { return wire::SlabReserveName; }
  SlabPool::Backend wrap(SlabPool::Backend B) override { return B; }
  Error open(ExecutorProcessControl &) override { return Error::success(); }
  // The host's processor is busy sending, the executor's waiting on the
  // socket: a transpose costs less there, done as the bytes land.
  bool sendsSourceOrder() const override { return true; }
  uint64_t largestRequest(ArrayRef<CheckedInput> Inputs) const override {
    return Transfer::messageCarrying(Inputs);
  }
  Error send(wire::SocketTransport &T, uint64_t SeqNo, ArrayRef<char> Plan,
             ArrayRef<wire::PayloadPart> Parts, ArrayRef<ExecutorAddr>, LaunchStats &) override {
    return T.sendWithPayload(wire::PayloadOpcode::Launch, SeqNo, Plan, Parts);
  }
  Error receive(wire::PayloadOpcode, ArrayRef<char> Plan, uint64_t PayloadBytes,
                HostOutputs &Outputs, ZeroCopyResult &R, LaunchStats &,
                std::vector<iovec> &Dst) override {
    return decodeZeroCopyResult(Plan, PayloadBytes, Outputs, R, Dst);
  }
  bool takesSlabs() const override { return false; }
  void adopt(wire::SocketTransport &, ArrayRef<char>, std::vector<int> Fds) override {
    // Never called: place() refuses slabs for a path that takes none.
    for (int Fd : Fds)
      ::close(Fd);
  }
};

} // namespace

std::unique_ptr<PayloadPath> makeSocketPayloads() {
  return std::make_unique<SocketPayloads>();
}

} // namespace catalyst::remote
