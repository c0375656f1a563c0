//===- BulkCopy.h - Copies too large to stay in the cache -------*- C++ -*-===//
//
// Megabytes copied into memory the copying process will not read again:
// an input written into a shared slab, an output copied out of one. The C
// library's memcpy writes around the cache only above a size it derives
// from the cache the processor reports, and a virtual machine may report
// far more than it has (480 MiB of L3 on the VM this was measured on);
// below that, memcpy reads every destination line before writing it.
// There, memcpy took 36-38 ms per 256 MiB in pieces of 256 KiB to 64 MiB
// and 22 ms in one piece; copyBulk takes 19-21 ms for either.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_COPY_BULKCOPY_H
#define CATALYST_REMOTE_COPY_BULKCOPY_H

#include <cstdint>

namespace catalyst::remote::copy {

// Copies from this size on are written around the cache: larger than a
// core's L2 (2 MiB here), they would not stay there, and would push out
// what does. Here a 16 MiB launch over four inputs of 4 MiB took 3.2 ms
// so, 4.6 ms through memcpy; a lone 1 MiB copy into a warm buffer took 1.5x
// as long so.
inline constexpr uint64_t BulkCopyBytes = 2 << 20;

// Copies Bytes from Src to Dst, which must not overlap. From BulkCopyBytes on,
// four pages at a time side by side with streaming stores, fenced before it
// returns, so a hand-over that follows (a socket write, a mailbox count)
// comes after the bytes; below, memcpy.
void copyBulk(char *Dst, const char *Src, uint64_t Bytes);

} // namespace catalyst::remote::copy

#endif
