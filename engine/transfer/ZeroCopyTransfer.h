//===- ZeroCopyTransfer.h - One round trip, payloads out of line -*- C++ -*-===//
//
// One message carries the plan (shapes, destinations in the executor's slab)
// and, out of line, every input's values, sent by scatter-gather straight
// from the caller's buffers (strided ones packed in bounded chunks, but
// transposes of a dense array sent as that array, for the executor to
// transpose as it lands: wire/SourceOrder.h). The
// reply's output values are read straight from the socket into fresh host
// buffers, usually by the launching thread itself. Nothing is staged at
// full size on either side. Over the executor's local socket the payloads
// go through shared memory instead: which of the two, a PayloadPath says
// (PayloadPath.h).
//
// Resident requests (wire/Residents.h: upload, fetch, release) go the same
// way, one round trip each, when the executor keeps residents; launches
// then take resident inputs, whose shapes alone travel.
//
// Threads: launch() and request() run on the launching thread, one at a
// time (the session's LaunchMutex); place(), finish() and disconnected() on
// whoever reads the transport: its reader thread, or the launching thread
// itself while it waits in readUntil(); close() at the session's teardown,
// with no launch running.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_ZEROCOPYTRANSFER_H
#define CATALYST_REMOTE_TRANSFER_ZEROCOPYTRANSFER_H

#include "PayloadPath.h"
#include "PhaseClock.h"
#include "ResidentRequests.h"
#include "SlabPool.h"
#include "Transfer.h"
#include "ZeroCopyResult.h"
#include "sync/Mutex.h"
#include "wire/Protocol.h"
#include "wire/Residents.h"
#include "wire/SocketTransport.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

namespace catalyst::remote {

class ZeroCopyTransfer final : public Transfer,
                               public ResidentRequests,
                               public wire::PayloadHandler {
public:
  // Enables the extension on the executor and installs the reply handler;
  // the launches' values take Path.
  static llvm::Expected<std::unique_ptr<ZeroCopyTransfer>>
  Create(llvm::orc::ExecutorProcessControl &EPC, wire::SocketTransport &T, uint64_t SlabInitial,
         uint64_t SlabCap, std::unique_ptr<PayloadPath> Path);
  ~ZeroCopyTransfer() override;

  const char *name() const override { return "zerocopy"; }
  // As the path says: in shared memory the message is the plan alone.
  uint64_t largestRequest(llvm::ArrayRef<CheckedInput> Inputs) const override;
  // The session runs one launch at a time, which the scratch buffers and
  // the single waiting launch rely on.
  llvm::Error launch(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<CheckedInput> Inputs,
                     HostOutputs &Outputs, LaunchStats &Stats, LaunchTimeline &When) override;
  llvm::Error close() override;

  // This, when the executor keeps residents (its bootstrap map says so).
  ResidentRequests *residents() override { return Residents ? this : nullptr; }
  llvm::Expected<wire::ResidentReply> request(wire::PayloadOpcode OpC, llvm::ArrayRef<char> Plan,
                                              llvm::ArrayRef<wire::PayloadPart> Parts,
                                              LaunchStats &Stats,
                                              llvm::MutableArrayRef<char> Into = {}) override;

  llvm::Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                           llvm::ArrayRef<char> Plan,
                                           uint64_t PayloadBytes) override;
  void finish(wire::PayloadOpcode OpC, uint64_t SeqNo,
              llvm::orc::shared::WrapperFunctionBuffer Plan, llvm::Error Err) override;
  void disconnected() override;

private:
  // The launch waiting for its result; lives on the launching thread's stack.
  struct Waiting {
    uint64_t SeqNo;
    HostOutputs *Outputs;
    LaunchStats *Stats;
    LaunchTimeline *When;
    llvm::Error Result = llvm::Error::success();
    std::atomic<bool> Finished{false};
    std::string RemoteError;
    PhaseClock::time_point Landing;
    // A resident request's, instead of Outputs: its reply, and where a
    // fetch's values go.
    wire::ResidentReply *Reply = nullptr;
    bool Fetch = false;
    llvm::MutableArrayRef<char> Into;
    // Set under M by place() when the reader starts writing its result
    // into it; from then on only finish() or disconnected() may take it.
    bool Claimed = false;
  };
  // Buffers every launch needs, kept to spare the allocations.
  struct Scratch {
    std::vector<uint64_t> Sizes;
    std::vector<llvm::orc::ExecutorAddr> Places;
    std::vector<wire::ZeroCopyInput> Inputs;
    std::vector<wire::LaunchOutputSpec> Outputs;
    std::vector<wire::SourceOrdered> Reordered; // inputs sent in source order
    std::vector<wire::ResidentRef> ResidentInputs, KeptOutputs;
    std::vector<char> Plan;
    std::vector<wire::MemrefPacker> Packers;
    std::vector<wire::PayloadPart> Parts;
    ZeroCopyResult Result;
  };

  ZeroCopyTransfer(wire::SocketTransport &T, SlabPool::Backend B, uint64_t Initial, uint64_t Cap,
                   std::unique_ptr<PayloadPath> Path, bool Residents)
      : T(T), Path(std::move(Path)), Pool(std::move(B), Initial, Cap), Residents(Residents) {}
  llvm::Error encodePlan(llvm::orc::ExecutorAddr Entry, llvm::ArrayRef<CheckedInput> Inputs,
                         const HostOutputs &Outputs);
  void chooseSourceOrders(llvm::ArrayRef<CheckedInput> Inputs);
  void collectPayload(llvm::ArrayRef<CheckedInput> Inputs, LaunchStats &Stats);
  llvm::Error sendAndWait(Waiting &W, LaunchStats &Stats,
                          llvm::function_ref<llvm::Error(uint64_t SeqNo)> Send);
  llvm::Error placeReply(Waiting &W, llvm::ArrayRef<char> Plan, uint64_t PayloadBytes,
                         std::vector<iovec> &Dst);
  llvm::Error placeOutputs(Waiting &W, wire::PayloadOpcode OpC, llvm::ArrayRef<char> Plan,
                           uint64_t PayloadBytes, std::vector<iovec> &Dst);
  Waiting *take(uint64_t SeqNo, bool Placed);
  void resolve(Waiting &W, llvm::Error Err);

  wire::SocketTransport &T; // set at creation; locks its own
  // Outlives Pool, whose slabs it may map. Set at creation; guards what
  // both threads touch itself.
  std::unique_ptr<PayloadPath> Path;
  // The executor's slab: the launching thread's, and the reader's in
  // place() while that launch waits for its result.
  SlabPool Pool;
  const bool Residents; // set at creation
  Scratch Work;         // the launching thread's
  sync::Mutex M;
  sync::CondVar Resolved; // with M: the waiting launch's Finished was set
  Waiting *Current GUARDED_BY(M) = nullptr;
  uint64_t NextSeqNo GUARDED_BY(M) = 1;
  bool Gone GUARDED_BY(M) = false;
};

} // namespace catalyst::remote

#endif
