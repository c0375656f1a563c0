//===- SharedResult.h - Decoding a launch result in shared memory -*- C++ -*-===//
//
// A launch over the local socket is answered with a SharedResult: a
// zero-copy result plan, the bytes of all outputs, and where in shared
// memory each output's values are (wire/Protocol.h). Every count is checked
// as for a zero-copy result, and every place against the memory this host
// mapped, before a byte is copied. Pure (bytes and a way to resolve
// executor addresses in, copies to make or an error out) so that it can be
// fuzzed without a connection.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_SHAREDRESULT_H
#define CATALYST_REMOTE_TRANSFER_SHAREDRESULT_H

#include "ZeroCopyResult.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace catalyst::remote {

// Where Bytes at executor address A are mapped in this process, or null
// when they are not all inside one mapping.
using ResolveShared = llvm::function_ref<const char *(llvm::orc::ExecutorAddr A, uint64_t Bytes)>;

struct SharedCopy {
  const char *From;
  char *To;
  uint64_t Bytes;
};

// Decodes Plan (a SharedResult's, its inner plan a zero-copy result's) into
// R and, when the launch ran, gets a host buffer for each output from
// Outputs and appends to Copies what to copy where: every output's bytes,
// from memory Resolve vouches for, to its buffer.
llvm::Error decodeSharedResult(llvm::ArrayRef<char> Plan, HostOutputs &Outputs, ZeroCopyResult &R,
                               ResolveShared Resolve, std::vector<SharedCopy> &Copies);

} // namespace catalyst::remote

#endif
