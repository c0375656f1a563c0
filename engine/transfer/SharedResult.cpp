//===- SharedResult.cpp - Decoding a launch result in shared memory -------===//

#include "SharedResult.h"

#include "wire/SpsCheck.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

using namespace wire;

namespace {

Error malformedResult(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "malformed shared-memory result: " + What);
}

} // namespace

Error decodeSharedResult(ArrayRef<char> Plan, HostOutputs &Outputs, ZeroCopyResult &R,
                         ResolveShared Resolve, std::vector<SharedCopy> &Copies) {
  std::vector<char> Inner;
  uint64_t Total = 0;
  std::vector<ExecutorAddr> Where;
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (!spsWellFormed<SPSSharedResult>(Plan.data(), Plan.size()) ||
      !SPSSharedResult::deserialize(IB, Inner, Total, Where))
    return malformedResult("undecodable shared-memory plan");
  // Places first, against the byte counts the inner plan gives: no buffer
  // is allocated for an output that is not all in memory this host mapped,
  // which bounds each by a mapping's size.
  if (auto Err = decodeZeroCopyPlan(Inner, R))
    return Err;
  if (R.RemoteError.empty() && Where.size() != R.Outputs.size())
    return malformedResult(Twine(Where.size()) + " places for " + Twine(R.Outputs.size()) +
                           " outputs");
  std::vector<const char *> From(R.RemoteError.empty() ? Where.size() : 0, nullptr);
  for (size_t I = 0; I < From.size(); ++I) {
    uint64_t Bytes = std::get<1>(R.Outputs[I]);
    if (Bytes && !(From[I] = Resolve(Where[I], Bytes)))
      return malformedResult("output " + Twine(I) + " (" + Twine(Bytes) + " bytes at " +
                             formatv("{0:x}", Where[I].getValue()) +
                             ") is outside the memory shared with the executor");
  }
  std::vector<iovec> Dst;
  if (auto Err = decodeZeroCopyResult(Inner, Total, Outputs, R, Dst))
    return Err;
  size_t Next = 0;
  for (size_t I = 0; I < From.size(); ++I) {
    uint64_t Bytes = std::get<1>(R.Outputs[I]);
    if (Bytes)
      Copies.push_back({From[I], static_cast<char *>(Dst[Next++].iov_base), Bytes});
  }
  return Error::success();
}

} // namespace catalyst::remote
