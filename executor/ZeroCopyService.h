//===- ZeroCopyService.h - Launches in one out-of-line round trip -*- C++ -*-===//
//
// Receives a launch plan and its inputs' payload straight into the session's
// slabs (every destination checked first), runs the entry, and answers with
// the output payload sent straight from the kernel's buffers, which it then
// frees. A bad request gets an error reply and the session goes on.
//
// The entry runs on the connection's reader thread: handing it to another
// thread would cost a wake-up per launch, a good part of a loopback round
// trip. Other requests of the session wait while a kernel runs; the host
// runs one launch per session at a time anyway.
//
// Its launches land in the connection's Slabs, and over the local socket
// are answered through its SharedSlabs; their inputs may be the session's
// residents, and their outputs may stay as residents, in its
// ResidentStore: all given at construction, all outliving it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_ZEROCOPYSERVICE_H
#define CATALYST_REMOTE_EXECUTOR_ZEROCOPYSERVICE_H

#include "LaunchPath.h"
#include "LaunchPlan.h"
#include "ReorderedInput.h"
#include "ResidentStore.h"
#include "SharedSlabs.h"
#include "Slabs.h"
#include "wire/MemrefLayout.h"
#include "wire/Protocol.h"
#include "wire/SocketTransport.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <atomic>
#include <chrono>

namespace catalyst::remote::executor {

// A memref the kernel returned, checked.
struct Returned {
  wire::MemrefDesc Desc;
  size_t ElemSize;
  wire::MemrefLayout Layout;
};

class ZeroCopyService final : public wire::PayloadHandler {
public:
  ZeroCopyService(Slabs &Regions, SharedSlabs &Shared, ResidentStore &Residents)
      : Regions(Regions), Residents(Residents), SharedPath(Shared) {}
  ZeroCopyService(const ZeroCopyService &) = delete;
  ZeroCopyService &operator=(const ZeroCopyService &) = delete;

  // The connection's transport (PayloadRouter), which launches are read
  // from and answered on, on its reader thread; attach() before the first
  // message, detach() once the session is over and the reader done.
  void attach(wire::SocketTransport &T) { Transport = &T; }
  void detach() { Transport = nullptr; }
  // Enables zero-copy launches for a host speaking HostVersion, when it is
  // wire::ZeroCopyVersion; else refuses them (each launch gets an error
  // reply naming both versions). Returns wire::ZeroCopyVersion.
  uint32_t enable(uint32_t HostVersion);

  llvm::Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                           llvm::ArrayRef<char> Plan,
                                           uint64_t PayloadBytes) override;
  wire::PayloadSink *sinkFor(size_t Piece) override;
  void finish(wire::PayloadOpcode OpC, uint64_t SeqNo,
              llvm::orc::shared::WrapperFunctionBuffer Plan, llvm::Error Err) override;
  void disconnected() override {}

private:
  using Clock = std::chrono::steady_clock;
  // The launch being received and run.
  struct Launch : LaunchPlan {
    Clock::time_point Arrived;
    LaunchPath *Path = nullptr; // how its bytes come and go: one of the two below
  };
  // Buffers every launch needs, kept to spare the allocations.
  struct Scratch {
    std::vector<char> Descs, Rv;
    std::vector<void *> Args;
    std::vector<wire::ZeroCopyOutput> Shapes;
    std::vector<wire::MemrefPacker> Packers;
    std::vector<wire::PayloadPart> Parts;
    std::vector<int> PieceOrder; // per payload piece, its Current.Orders index or -1
    ReorderedInput Reordered;
  };

  llvm::Error notEnabled() const;
  llvm::Error decode(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes, const LaunchPath &Path);
  llvm::Error bindResidents();
  void buildArguments();
  llvm::Error keepOutputs(llvm::ArrayRef<Returned> Outs, llvm::SmallPtrSetImpl<void *> &Adopted);
  uint64_t collectOutputs(llvm::ArrayRef<Returned> Outs);
  void run(uint64_t SeqNo);
  void replyError(uint64_t SeqNo, llvm::Error Err);

  // Used on the reader thread between attach() and detach(); detach()
  // clears it on the serving thread, after the reader's last use
  // (TransportHandoff.h says why that order holds).
  wire::SocketTransport *Transport = nullptr;
  Slabs &Regions;           // set at construction; thread-safe itself
  ResidentStore &Residents; // set at construction; the reader's
  // Used on the reader thread.
  SocketLaunchPath SocketPath;
  SharedLaunchPath SharedPath;
  std::atomic<bool> Enabled{false};
  std::atomic<uint32_t> RefusedVersion{0};
  Launch Current;
  Scratch Work;
};

} // namespace catalyst::remote::executor

#endif
