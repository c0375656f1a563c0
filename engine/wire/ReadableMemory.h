//===- ReadableMemory.h - Finding memory a send would fault on --*- C++ -*-===//
//
// A descriptor can point anywhere: a kernel may return one over unmapped or
// PROT_NONE memory, a caller may pass one. Sending from it would fail part
// way through a message (the socket refuses the bad address after the header
// went out) and copying from it would crash. So before either, one byte of
// each page the values lie on is read with process_vm_readv on this very
// process, which reports a bad address instead of faulting: one system call
// per 1024 pages, so a small launch pays one.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_READABLEMEMORY_H
#define CATALYST_REMOTE_WIRE_READABLEMEMORY_H

#include "MemrefLayout.h"

namespace catalyst::remote::wire {

// Succeeds when every element D describes (L is its layout) can be read.
// Dense values are probed page by page; sparse ones element by element
// where that takes fewer probes than their span has pages, else every page
// of the span (so a view with more elements than pages whose span has an
// unmapped hole between elements is refused too). Where the system refuses
// process_vm_readv itself (a seccomp filter), nothing can be probed and this
// succeeds: the transport still ends a connection whose send fails part way.
llvm::Error checkReadable(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L,
                          MemrefName Name);

} // namespace catalyst::remote::wire

#endif
