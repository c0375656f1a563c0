//===- PayloadPath.h - Where a zero-copy launch's values travel -*- C++ -*-===//
//
// A zero-copy launch (ZeroCopyTransfer) sends its plan as one message and
// gets its result as one; the values of its inputs and outputs take one
// of two paths, each a type behind this interface:
//
//   SocketPayloads: out of line in those messages, by scatter-gather
//     between the caller's buffers and the socket, with nothing staged
//     (TCP and socket files).
//   SharedPayloads: in slabs both processes map, which the host writes
//     and reads with one copy each way (the executor's local socket).
//
//   auto Path = makeSocketPayloads();          // or a SharedPayloads
//   SlabPool Pool(Path->wrap(Backend), ...);   // slabs of the path's kind
//   Path->send(T, SeqNo, Plan, Parts, Places, Stats);
//   ... Path->receive(OpC, Plan, PayloadBytes, Outputs, R, Stats, Dst) ...
//
// Threads: send() runs on the launching thread; receive(), takesSlabs()
// and adopt() on whichever thread reads the transport. An implementation
// says how it guards what both touch.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_PAYLOADPATH_H
#define CATALYST_REMOTE_TRANSFER_PAYLOADPATH_H

#include "HostOutputs.h"
#include "SlabPool.h"
#include "Transfer.h"
#include "ZeroCopyResult.h"
#include "catalyst/remote/Stats.h"
#include "wire/SocketTransport.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"

#include <memory>
#include <sys/uio.h>
#include <vector>

namespace catalyst::remote {

class PayloadPath {
public:
  virtual ~PayloadPath();

  // The executor's service that reserves this path's slabs: its instance
  // and the function that reserves (wire/Protocol.h).
  virtual const char *reserverName() const = 0;
  virtual const char *reserveName() const = 0;
  // B, the backend of the session's slab pool, as this path needs it.
  virtual SlabPool::Backend wrap(SlabPool::Backend B) = 0;
  // Sets up what the path needs of the executor once zero-copy launches
  // are enabled.
  virtual llvm::Error open(llvm::orc::ExecutorProcessControl &EPC) = 0;
  // Whether an input may be sent as its array in source order, for the
  // executor to transpose as it lands (wire/SourceOrder.h).
  virtual bool sendsSourceOrder() const = 0;
  // The largest message a launch of Inputs sends.
  virtual uint64_t largestRequest(llvm::ArrayRef<CheckedInput> Inputs) const = 0;
  // Sends launch SeqNo: its Plan, and each input's values (Parts) for its
  // place in the executor's slab (Places).
  virtual llvm::Error send(wire::SocketTransport &T, uint64_t SeqNo, llvm::ArrayRef<char> Plan,
                           llvm::ArrayRef<wire::PayloadPart> Parts,
                           llvm::ArrayRef<llvm::orc::ExecutorAddr> Places, LaunchStats &Stats) = 0;
  // Decodes a result message (OpC, its Plan, the size of the payload that
  // follows) into R, with a host buffer from Outputs for each output: the
  // payload's destinations go to Dst, or the outputs are copied here.
  virtual llvm::Error receive(wire::PayloadOpcode OpC, llvm::ArrayRef<char> Plan,
                              uint64_t PayloadBytes, HostOutputs &Outputs, ZeroCopyResult &R,
                              LaunchStats &Stats, std::vector<iovec> &Dst) = 0;
  // Whether the path maps slabs the executor passes (SharedSlab messages).
  virtual bool takesSlabs() const = 0;
  // A SharedSlab message and its descriptors, which it now owns: the slab
  // mapped, or T's connection closed saying why.
  virtual void adopt(wire::SocketTransport &T, llvm::ArrayRef<char> Plan, std::vector<int> Fds) = 0;
};

// The socket path: values in the messages themselves.
std::unique_ptr<PayloadPath> makeSocketPayloads();

} // namespace catalyst::remote

#endif
