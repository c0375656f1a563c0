//===- SharedSlabs.h - Memory the executor shares with its host -*- C++ -*-===//
//
// A host on this machine, connected over the local socket, gets its launch
// slabs as memfds it maps too (wire/SharedMemory.h) and writes the inputs
// there itself; kernels read them in place. Outputs go back the same way:
// one that is already in a shared slab (an input handed back) stays where
// it is, the others are copied into the connection's output area, a memfd
// of its own that grows to the largest launch's outputs and is passed to
// the host anew when it does. Every slab the host gets comes in a
// SharedSlab message through the connection (SCM_RIGHTS), and counts
// against --max-slab-mib: the input slabs are the connection's Slabs, the
// mailbox and output area counted in its MemoryBudget, both given at
// construction and outliving this.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_SHAREDSLABS_H
#define CATALYST_REMOTE_EXECUTOR_SHAREDSLABS_H

#include "MemoryBudget.h"
#include "Slabs.h"
#include "wire/Protocol.h"
#include "wire/SocketTransport.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace catalyst::remote::executor {

class SharedSlabs {
public:
  SharedSlabs(Slabs &Regions, MemoryBudget &Budget) : Regions(Regions), Budget(Budget) {}
  SharedSlabs(const SharedSlabs &) = delete;
  SharedSlabs &operator=(const SharedSlabs &) = delete;

  // The local socket's transport, through which slabs reach the host
  // (TransportHandoff): attach() on its reader thread before the first
  // message, detach() once the session is over and no request is left.
  // Never called on a TCP connection, where nothing is shared.
  void attach(wire::SocketTransport &T) { Transport = &T; }
  void detach() { Transport = nullptr; }

  // A launch slab of at least Bytes in memory the host maps; the host has
  // it (a SharedSlab message ahead of this call's reply) once this returns.
  llvm::Expected<char *> reserve(uint64_t Bytes);

  // Where the host reads each of a launch's outputs, given as the parts a
  // result would send (ZeroCopyService): Where gets one address per part,
  // Copied the bytes copied or packed into the output area. On the reader
  // thread, one launch at a time.
  llvm::Error placeOutputs(llvm::ArrayRef<wire::PayloadPart> Parts,
                           std::vector<llvm::orc::ExecutorAddr> &Where, uint64_t &Copied);

  // Makes the session's shared mailbox (wire/Mailbox.h) and passes it to
  // the host, ahead of this call's reply; the transport reads the host's
  // messages there from now on, and posts its own once the host has.
  llvm::Error openMailbox();

  // Sends a SharedResult: the result plan, its outputs' bytes, and Where.
  llvm::Error sendResult(uint64_t SeqNo, llvm::ArrayRef<char> Plan, uint64_t OutputBytes,
                         llvm::ArrayRef<llvm::orc::ExecutorAddr> Where);

private:
  llvm::Error pass(wire::SharedSlabKind Kind, const char *Base, uint64_t Bytes, int Fd);
  llvm::Error growOutputArea(uint64_t Bytes);
  llvm::Error notShared() const;

  Slabs &Regions;       // set at construction; thread-safe itself
  MemoryBudget &Budget; // set at construction; thread-safe itself
  // Used by requests on the workers (reserve, openMailbox) and on the
  // reader (placeOutputs, sendResult), between attach() and detach().
  wire::SocketTransport *Transport = nullptr;
  // The output area (reader thread only).
  char *Area = nullptr;
  uint64_t AreaBytes = 0;
};

} // namespace catalyst::remote::executor

#endif
