//===- ZeroCopyResult.cpp - Decoding a zero-copy launch's result ----------===//

#include "ZeroCopyResult.h"

#include "wire/SpsCheck.h"

using namespace llvm;

namespace catalyst::remote {

using namespace wire;

namespace {

Error malformedResult(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "malformed launch result: " + What);
}

} // namespace

Error decodeZeroCopyPlan(ArrayRef<char> Plan, ZeroCopyResult &R) {
  R.RemoteError.clear();
  R.Outputs.clear(); // SPS appends to the sequences it decodes into
  R.StartNs = 0;
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  bool Decoded =
      spsWellFormed<SPSZeroCopyResult>(Plan.data(), Plan.size()) &&
      SPSZeroCopyResult::deserialize(IB, R.RemoteError, R.Outputs, R.CopyInNs, R.KernelNs,
                                     R.CopyOutNs, R.ExecutorCopyBytes, R.StartNs);
  return Decoded ? Error::success() : malformedResult("undecodable plan");
}

Error decodeZeroCopyResult(ArrayRef<char> Plan, uint64_t PayloadBytes, HostOutputs &Outputs,
                           ZeroCopyResult &R, std::vector<iovec> &Dst) {
  if (auto Err = decodeZeroCopyPlan(Plan, R))
    return Err;
  if (!R.RemoteError.empty())
    return PayloadBytes ? malformedResult("an error with a payload") : Error::success();
  if (R.Outputs.size() != Outputs.size())
    return malformedResult(Twine(R.Outputs.size()) + " outputs, expected " + Twine(Outputs.size()));
  // The byte counts first: no buffer is allocated for more than the
  // payload the executor actually sends.
  uint64_t Total = 0;
  for (const ZeroCopyOutput &O : R.Outputs)
    if (__builtin_add_overflow(Total, std::get<1>(O), &Total))
      return malformedResult("output byte counts overflow");
  if (Total != PayloadBytes)
    return malformedResult("payload of " + Twine(PayloadBytes) + " bytes for outputs of " +
                           Twine(Total));
  for (size_t I = 0; I < R.Outputs.size(); ++I) {
    auto &[Sizes, Bytes] = R.Outputs[I];
    // The shape's bytes before any buffer: a shape of 2^40 elements with a
    // byte count of 16 must not cost the host an allocation.
    auto ShapeBytes = Outputs.bytesOf(I, Sizes);
    if (!ShapeBytes)
      return ShapeBytes.takeError();
    if (Outputs.keptAs(I)) {
      // It stays in the executor: its shape alone comes back.
      if (Bytes)
        return malformedResult("output " + Twine(I) + ", kept in the executor, came with " +
                               Twine(Bytes) + " bytes");
      continue;
    }
    if (*ShapeBytes != Bytes)
      return malformedResult("output " + Twine(I) + " has " + Twine(Bytes) +
                             " bytes for its shape's " + Twine(*ShapeBytes));
  }
  for (size_t I = 0; I < R.Outputs.size(); ++I) {
    if (Outputs.keptAs(I)) {
      if (auto Err = Outputs.keptShape(I, std::get<0>(R.Outputs[I])))
        return Err;
      continue;
    }
    auto Buf = Outputs.allocate(I, std::get<0>(R.Outputs[I]));
    if (!Buf)
      return Buf.takeError();
    if (!Buf->empty())
      Dst.push_back({Buf->data(), Buf->size()});
  }
  return Error::success();
}

} // namespace catalyst::remote
