//===- SharedPayloads.h - Launch payloads through shared memory -*- C++ -*-===//
//
// PayloadPath.h's shared-memory path, the host's side of a zero-copy
// session over the executor's local socket: the slabs
// the executor passed (SharedSlab messages, each a sealed memfd) mapped
// here, launch inputs written straight into them (a dense input with one
// copy, a strided one packed in place), and each output copied once from
// where the executor says it is into the host buffer that receives it.
// Every address and length the executor names is checked against what is
// mapped, and each mapping against what the kernel says of its memfd.
//
// Outputs are copied rather than lent: a caller owns its output buffers and
// frees them with its allocator (free(), Catalyst's), which shared memory
// cannot satisfy; and the executor could still write to memory it shares,
// and reuses it for the next launch.
//
// Threads: the launching thread (sending a launch) and whichever thread
// reads the transport (the reader thread, or the launching one in
// readUntil(): adopting a slab, receiving a result), both under M.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_SHAREDPAYLOADS_H
#define CATALYST_REMOTE_TRANSFER_SHAREDPAYLOADS_H

#include "PayloadPath.h"
#include "SharedResult.h"
#include "SlabPool.h"
#include "catalyst/remote/Stats.h"
#include "sync/Mutex.h"
#include "wire/SharedMemory.h"
#include "wire/SocketTransport.h"

#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"

#include <map>

namespace catalyst::remote {

class SharedPayloads final : public PayloadPath {
public:
  // An input slab may be at most SlabCap (the session's), the output area
  // at most AreaCap (the largest message the session accepts).
  SharedPayloads(uint64_t SlabCap, uint64_t AreaCap) : SlabCap(SlabCap), AreaCap(AreaCap) {}
  ~SharedPayloads() override;
  SharedPayloads(const SharedPayloads &) = delete;
  SharedPayloads &operator=(const SharedPayloads &) = delete;

  // B reserving shared slabs (the executor's shared reserve service), and
  // each one it reserves checked to have been passed here, and unmapped
  // here when released.
  SlabPool::Backend wrap(SlabPool::Backend B) override;

  const char *reserverName() const override { return wire::SharedSlabsInstanceName; }
  const char *reserveName() const override { return wire::SharedSlabReserveName; }
  // Asks the executor for the session's shared mailbox, when it has one:
  // it comes as a SharedSlab ahead of the reply (adopt()), and small
  // launches and results go through it.
  llvm::Error open(llvm::orc::ExecutorProcessControl &EPC) override;
  // The host writes the slab itself, packing as it goes.
  bool sendsSourceOrder() const override { return false; }
  // The message is the plan alone: the inputs go to the slab.
  uint64_t largestRequest(llvm::ArrayRef<CheckedInput> Inputs) const override {
    return Transfer::framingFor(Inputs);
  }
  bool takesSlabs() const override { return true; }

  // A SharedSlab message and the descriptors that came with it (now owned
  // here, closed once mapped or refused): the slab mapped, or why it is
  // refused. A mailbox goes to T, which it serves (none: refused).
  llvm::Error accept(llvm::ArrayRef<char> Plan, std::vector<int> Fds,
                     wire::SocketTransport *T = nullptr);
  // accept(), closing T's connection when the slab is refused: an executor
  // that passes what cannot be mapped safely is not trusted further.
  void adopt(wire::SocketTransport &T, llvm::ArrayRef<char> Plan, std::vector<int> Fds) override;

  // Writes the input parts (ZeroCopyTransfer's payload) at their places in
  // the input slab and sends the SharedLaunch.
  llvm::Error send(wire::SocketTransport &T, uint64_t SeqNo, llvm::ArrayRef<char> Plan,
                   llvm::ArrayRef<wire::PayloadPart> Parts,
                   llvm::ArrayRef<llvm::orc::ExecutorAddr> Places, LaunchStats &Stats) override;

  // A SharedResult with no payload goes to receiveShared(); anything else
  // (an error reply) is decoded as over a socket.
  llvm::Error receive(wire::PayloadOpcode OpC, llvm::ArrayRef<char> Plan, uint64_t PayloadBytes,
                      HostOutputs &Outputs, ZeroCopyResult &R, LaunchStats &Stats,
                      std::vector<iovec> &Dst) override;
  // Decodes a SharedResult plan into R and copies the outputs into the
  // buffers Outputs gives.
  llvm::Error receiveShared(llvm::ArrayRef<char> Plan, HostOutputs &Outputs, ZeroCopyResult &R,
                            LaunchStats &Stats);

  // The slabs mapped here now, input ones and the output area.
  size_t mappings() const;

private:
  struct Mapped {
    wire::SharedMapping Local;
    uint64_t Base; // in the executor
  };
  llvm::Error adoptSlab(llvm::ArrayRef<char> Plan, int Fd, wire::SocketTransport *T);
  static llvm::Error adoptMailbox(uint64_t Bytes, int Fd, wire::SocketTransport *T);
  llvm::Error expect(llvm::orc::ExecutorAddr Base, uint64_t Bytes) const;
  void forget(llvm::orc::ExecutorAddr Base);
  // Where [A, A + Bytes) of the executor is mapped here; null when it is
  // not all inside one mapping. Under M.
  char *resolve(llvm::orc::ExecutorAddr A, uint64_t Bytes) const REQUIRES(M);
  bool overlaps(uint64_t Base, uint64_t Bytes, bool Input) const REQUIRES(M);

  const uint64_t SlabCap, AreaCap;
  // Messages are handled on whichever thread reads (the reader thread, or
  // a launching one), launches on the launching thread: both under M.
  mutable sync::Mutex M;
  std::map<uint64_t, Mapped> Inputs GUARDED_BY(M); // by base in the executor
  Mapped Area GUARDED_BY(M){};                  // the output area; Local.Base null before the first
  std::vector<SharedCopy> Copies GUARDED_BY(M); // kept to spare allocations
};

} // namespace catalyst::remote

#endif
