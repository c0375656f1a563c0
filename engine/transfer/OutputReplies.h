//===- OutputReplies.h - Checking the outputs an executor returns -*- C++ -*-===//
//
// Naive and batched launches learn their outputs in two replies: the output
// descriptors the kernel wrote (executor addresses), then the memory those
// span, read back. Both come from the executor and are checked before use:
// the descriptor area's size against the ranks asked for, each descriptor's
// layout (no overflow, no wrap), the count of buffers read against the spans
// asked for, and each buffer's size against its span. Only then are values
// packed into host buffers, from inside the buffers read. Pure functions
// (bytes in, a checked result or an error out), fuzzed in fuzz/.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_OUTPUTREPLIES_H
#define CATALYST_REMOTE_TRANSFER_OUTPUTREPLIES_H

#include "catalyst/remote/Launch.h"
#include "wire/MemrefLayout.h"

#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"

#include <vector>

namespace catalyst::remote {

// One output as the executor returned it.
struct ReturnedOutput {
  std::vector<char> DescBytes; // a copy of its descriptor
  size_t Rank = 0;
  size_t ElemSize = 0;
  wire::MemrefLayout Layout;
  llvm::orc::ExecutorAddrRange Span; // executor memory holding its values

  wire::MemrefDesc desc() const {
    return wire::MemrefDesc(const_cast<char *>(DescBytes.data()), Rank);
  }
  std::vector<int64_t> sizes() const;
};

// Splits Rv, the descriptor area the kernel wrote, into the outputs' checked
// descriptors: Rv holds exactly the descriptors of Outputs' ranks, each
// describes a valid memref of its element size.
llvm::Expected<std::vector<ReturnedOutput>> decodeReturned(llvm::ArrayRef<char> Rv,
                                                           llvm::ArrayRef<MemrefArg> Outputs);

// The executor memory to read for Outs: one span per output with elements.
std::vector<llvm::orc::ExecutorAddrRange> spansToRead(llvm::ArrayRef<ReturnedOutput> Outs);

// Read must hold one buffer per span of Spans, each exactly its size.
llvm::Error checkRead(llvm::ArrayRef<std::vector<uint8_t>> Read,
                      llvm::ArrayRef<llvm::orc::ExecutorAddrRange> Spans);

// Packs O's values from Span (the bytes of O.Span, read) into Dst, dense
// row-major; Span and Dst must have exactly the sizes O's layout says.
llvm::Error unpackOutput(const ReturnedOutput &O, size_t Index, llvm::ArrayRef<uint8_t> Span,
                         llvm::MutableArrayRef<char> Dst);

} // namespace catalyst::remote

#endif
