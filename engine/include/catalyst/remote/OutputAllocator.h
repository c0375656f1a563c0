//===- OutputAllocator.h - Where host copies of outputs live ----*- C++ -*-===//
//
// Launch outputs come back into fresh host buffers that the caller owns.
// When the process defines Catalyst's `__catalyst__rt__alloc_managed`, that
// allocator is used so Catalyst frees them as usual; otherwise malloc, so a
// caller releases them with free() as MLIR-compiled code does. Release is
// only called by the engine to undo a launch that failed half-way.
//
// Threads: both functions may be called from any thread, at once: the
// launching caller's, the transport's reader thread (a zero-copy result
// read as it arrives) and the thread that prepares forecast outputs ahead
// of a launch. An allocator given in SessionOptions must allow that, as
// malloc and Catalyst's managed allocator do.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_OUTPUTALLOCATOR_H
#define CATALYST_REMOTE_OUTPUTALLOCATOR_H

#include <cstddef>

namespace catalyst::remote {

struct OutputAllocator {
  void *(*Allocate)(size_t Bytes) = nullptr;
  // May be null when the allocator offers no way back (the memory then stays
  // with the allocator's owner, as Catalyst's managed memory does).
  void (*Release)(void *Buffer) = nullptr;
};

// Catalyst's managed allocator when the process has one, else malloc/free.
OutputAllocator defaultOutputAllocator();

} // namespace catalyst::remote

#endif
