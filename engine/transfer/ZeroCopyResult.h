//===- ZeroCopyResult.h - Decoding a zero-copy launch's result --*- C++ -*-===//
//
// The executor's answer to a zero-copy launch is a plan (an error, or each
// output's shape and byte count, and timings) followed by the outputs'
// values. The plan decides where the payload lands, so every count is
// checked against the launch's outputs and the payload before any buffer is
// handed to the transport. Pure (bytes in, checked destinations or an error
// out) so that it can be fuzzed without a connection.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_ZEROCOPYRESULT_H
#define CATALYST_REMOTE_TRANSFER_ZEROCOPYRESULT_H

#include "HostOutputs.h"
#include "wire/Protocol.h"

#include <string>
#include <sys/uio.h>
#include <vector>

namespace catalyst::remote {

struct ZeroCopyResult {
  std::string RemoteError; // the executor's, when the launch did not run
  uint64_t CopyInNs = 0, KernelNs = 0, CopyOutNs = 0, ExecutorCopyBytes = 0;
  uint64_t StartNs = 0; // the executor's clock when the inputs began to land
  std::vector<wire::ZeroCopyOutput> Outputs; // kept to spare allocations
};

// Decodes Plan into R; nothing more.
llvm::Error decodeZeroCopyPlan(llvm::ArrayRef<char> Plan, ZeroCopyResult &R);

// Decodes Plan into R and, when the
// launch ran, gets a host buffer for each output from Outputs and appends
// where the PayloadBytes that follow go to Dst: exactly PayloadBytes in all,
// inside those buffers.
llvm::Error decodeZeroCopyResult(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes,
                                 HostOutputs &Outputs, ZeroCopyResult &R, std::vector<iovec> &Dst);

} // namespace catalyst::remote

#endif
