//===- ZeroCopyTransfer.h - One round trip, payloads out of line -*- C++ -*-===//
//
// One message carries the plan (shapes, destinations in the executor's slab)
// and, out of line, every input's values, sent by scatter-gather straight
// from the caller's buffers (strided ones packed in bounded chunks). The
// reply's output values are read straight from the socket into fresh host
// buffers. Nothing is staged at full size on either side.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_ZEROCOPYTRANSFER_H
#define CATALYST_REMOTE_TRANSFER_ZEROCOPYTRANSFER_H

#include "../wire/SocketTransport.h"
#include "PhaseClock.h"
#include "SlabPool.h"
#include "Transfer.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

#include <condition_variable>
#include <map>
#include <mutex>

namespace catalyst::remote {

class ZeroCopyTransfer final : public Transfer, public wire::PayloadHandler {
public:
  // Enables the extension on the executor and installs the reply handler.
  static llvm::Expected<std::unique_ptr<ZeroCopyTransfer>>
  Create(llvm::orc::ExecutorProcessControl &EPC, wire::SocketTransport &T, uint64_t SlabInitial,
         uint64_t SlabCap);
  ~ZeroCopyTransfer() override;

  const char *name() const override { return "zerocopy"; }
  llvm::Error launch(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<InputPlan> Inputs,
                     HostOutputs &Outputs, LaunchStats &Stats) override;
  llvm::Error close() override;

  llvm::Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                           llvm::ArrayRef<char> Plan,
                                           uint64_t PayloadBytes) override;
  void finish(wire::PayloadOpcode OpC, uint64_t SeqNo,
              llvm::orc::shared::WrapperFunctionBuffer Plan, llvm::Error Err) override;
  void disconnected() override;

private:
  // A launch waiting for its result; lives on the launching thread's stack.
  struct Waiting {
    HostOutputs *Outputs;
    LaunchStats *Stats;
    llvm::Error Result = llvm::Error::success();
    std::atomic<bool> Finished{false};
    std::string RemoteError;
    PhaseClock::time_point Landing;
  };

  ZeroCopyTransfer(wire::SocketTransport &T, SlabPool::Backend B, uint64_t Initial, uint64_t Cap)
      : T(T), Pool(std::move(B), Initial, Cap) {}
  llvm::Expected<std::vector<char>> encodePlan(llvm::orc::ExecutorAddr Entry,
                                               llvm::ArrayRef<InputPlan> Inputs,
                                               const HostOutputs &Outputs);
  void resolve(Waiting &W, llvm::Error Err);
  llvm::Error placeOutputs(Waiting &W, llvm::ArrayRef<char> Plan, uint64_t PayloadBytes,
                           std::vector<iovec> &Dst);

  wire::SocketTransport &T;
  SlabPool Pool;
  std::mutex M;
  std::condition_variable Resolved;
  std::map<uint64_t, Waiting *> InFlight;
  uint64_t NextSeqNo = 1;
  bool Gone = false;
};

} // namespace catalyst::remote

#endif
