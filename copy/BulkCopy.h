//===- BulkCopy.h - Copies too large to stay in the cache -------*- C++ -*-===//
//
// Megabytes copied into memory the copying process will not read again:
// an input written into a shared slab, an output copied out of one. The C
// library's memcpy writes around the cache only above a size it derives
// from the cache the processor reports, and a virtual machine may report
// far more than it has; below that, memcpy reads every destination line
// before writing it. The launch/local/<size> rows' memory-copy limit
// (benchmarks/TransferBench.cpp) and copy_us of pack/transposed/<size>
// (PackBench.cpp) time copyBulk; docs/performance.md ("On one machine:
// shared memory") has it measured against memcpy.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_COPY_BULKCOPY_H
#define CATALYST_REMOTE_COPY_BULKCOPY_H

#include <cstdint>

namespace catalyst::remote::copy {

// Copies from this size on are written around the cache: larger than a
// core's L2 (2 MiB on the machine it was chosen on), they would not stay
// there, and would push out what does; a smaller one into a warm buffer is
// faster through memcpy. launch/local/16MiB/4in/rank1 and the 1MiB rows
// (TransferBench.cpp) measure both sides of it.
inline constexpr uint64_t BulkCopyBytes = 2 << 20;

// Copies Bytes from Src to Dst, which must not overlap. From BulkCopyBytes on,
// four pages at a time side by side with streaming stores, fenced before it
// returns, so a hand-over that follows (a socket write, a mailbox count)
// comes after the bytes; below, memcpy.
void copyBulk(char *Dst, const char *Src, uint64_t Bytes);

} // namespace catalyst::remote::copy

#endif
