//===- SharedMemory.h - Memory a host and its executor both map -*- C++ -*-===//
//
// Slabs shared by the two processes of a session on one machine are memfds
// whose size is sealed: once either side maps one, the other can neither
// shrink it under its feet (a page beyond the end would raise SIGBUS in
// whoever touches it) nor grow it. The receiver of a descriptor believes
// nothing its peer says about it: it checks that it is such a memfd and
// maps the size the kernel reports.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SHAREDMEMORY_H
#define CATALYST_REMOTE_WIRE_SHAREDMEMORY_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace catalyst::remote::wire {

// A memfd of Bytes bytes, its size sealed (close-on-exec); Name shows in
// /proc/PID/maps.
llvm::Expected<int> createSealedMemory(uint64_t Bytes, const char *Name = "catalyst-remote-slab");

// A mapping of a memfd received from the peer.
struct SharedMapping {
  char *Base = nullptr;
  uint64_t Bytes = 0;
};

// Maps Fd (which stays the caller's) when it is a memfd of exactly Bytes
// bytes, at most Limit, its size sealed against shrinking; Writable maps it
// read-write, else read-only. Says what is wrong otherwise.
llvm::Expected<SharedMapping> mapSealedMemory(int Fd, uint64_t Bytes, uint64_t Limit,
                                              bool Writable);

} // namespace catalyst::remote::wire

#endif
