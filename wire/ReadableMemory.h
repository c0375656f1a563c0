//===- ReadableMemory.h - Finding memory a send would fault on --*- C++ -*-===//
//
// A descriptor can point anywhere: a kernel may return one over unmapped or
// PROT_NONE memory, a caller may pass one. Sending from it would fail part
// way through a message (the socket refuses the bad address after the header
// went out) and copying from it would crash. So before either, the pages the
// values lie on are checked without touching them: a contiguous span with
// one madvise(MADV_POPULATE_READ) (from 16 MiB on, against the mappings
// /proc/self/maps lists, which costs the same whatever the size, where the
// madvise walks every page), and sparse values, or a span that call
// refuses (to find the page, or to overrule it), by reading one byte per
// page with process_vm_readv on this very process, which reports a bad
// address instead of faulting, 1024 pages per call. A small launch pays one
// system call.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_READABLEMEMORY_H
#define CATALYST_REMOTE_WIRE_READABLEMEMORY_H

#include "MemrefLayout.h"

#include "llvm/ADT/SmallVector.h"

namespace catalyst::remote::wire {

// Succeeds when every element D describes (L is its layout) can be read.
// Sparse values are probed element by element where that takes fewer
// probes than their span has pages; otherwise every page of the span is
// (so a view with more elements than pages whose span has an unmapped hole
// between elements is refused too). Where the system refuses
// process_vm_readv itself (a seccomp filter), nothing can be probed and this
// succeeds: the transport still ends a connection whose send fails part way.
llvm::Error checkReadable(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L,
                          MemrefName Name);

// The memrefs of one launch, checked together: the contiguous spans of
// many slices of one buffer lie on the same few pages, and spans that
// share or touch pages are checked with one system call for all of them.
// Sparse views are checked on their own, as checkReadable does. The error
// names the first memref added that cannot be read.
class ReadableSet {
public:
  void add(const MemrefDesc &D, size_t ElemSize, const MemrefLayout &L, MemrefName Name);
  llvm::Error check();

private:
  struct Member {
    MemrefDesc D;
    size_t ElemSize;
    MemrefLayout L;
    MemrefName Name;
    uintptr_t First, End; // page-aligned
  };
  llvm::Error checkEach() const;

  llvm::SmallVector<Member, 8> Members;
};

} // namespace catalyst::remote::wire

#endif
