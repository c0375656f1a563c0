//===- OutputReplies.cpp - Checking the outputs an executor returns -------===//

#include "OutputReplies.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

using namespace wire;

namespace {

Error badReply(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "malformed reply from the executor: " + What);
}

} // namespace

std::vector<int64_t> ReturnedOutput::sizes() const {
  std::vector<int64_t> Sizes(Rank);
  for (size_t K = 0; K < Rank; ++K)
    Sizes[K] = desc().size(K);
  return Sizes;
}

Expected<std::vector<ReturnedOutput>> decodeReturned(ArrayRef<char> Rv,
                                                     ArrayRef<MemrefArg> Outputs) {
  uint64_t Expected = 0;
  for (const MemrefArg &Out : Outputs)
    Expected += MemrefDesc::byteSize(Out.Rank);
  if (Rv.size() != Expected)
    return badReply(Twine(Rv.size()) + " bytes of output descriptors, expected " + Twine(Expected) +
                    " for " + Twine(Outputs.size()) + " outputs");
  std::vector<ReturnedOutput> Outs(Outputs.size());
  const char *Cursor = Rv.data();
  for (size_t I = 0; I < Outputs.size(); ++I) {
    ReturnedOutput &O = Outs[I];
    size_t Bytes = MemrefDesc::byteSize(Outputs[I].Rank);
    O.DescBytes.assign(Cursor, Cursor + Bytes);
    Cursor += Bytes;
    O.Rank = Outputs[I].Rank;
    O.ElemSize = Outputs[I].ElemSize;
    auto L = layoutOf(O.desc(), O.ElemSize, {"output", I});
    if (!L)
      return L.takeError();
    O.Layout = *L;
    // layoutOf checked that the span's ends do not wrap.
    if (L->Elements)
      O.Span = {ExecutorAddr::fromPtr(O.desc().aligned()) + L->FirstElement * int64_t(O.ElemSize),
                ExecutorAddrDiff(L->SpanBytes)};
  }
  return Outs;
}

std::vector<ExecutorAddrRange> spansToRead(ArrayRef<ReturnedOutput> Outs) {
  std::vector<ExecutorAddrRange> Spans;
  for (const ReturnedOutput &O : Outs)
    if (O.Layout.Elements)
      Spans.push_back(O.Span);
  return Spans;
}

Error checkRead(ArrayRef<std::vector<uint8_t>> Read, ArrayRef<ExecutorAddrRange> Spans) {
  if (Read.size() != Spans.size())
    return badReply(Twine(Read.size()) + " buffers read for " + Twine(Spans.size()) + " spans");
  for (size_t I = 0; I < Spans.size(); ++I)
    if (Read[I].size() != Spans[I].size())
      return badReply("buffer " + Twine(I) + " holds " + Twine(Read[I].size()) +
                      " bytes for a span of " + Twine(Spans[I].size()));
  return Error::success();
}

Error unpackOutput(const ReturnedOutput &O, size_t Index, ArrayRef<uint8_t> Span,
                   MutableArrayRef<char> Dst) {
  if (Span.size() != O.Layout.SpanBytes || Dst.size() != O.Layout.Bytes)
    return badReply("output " + Twine(Index) + ": " + Twine(Span.size()) + " bytes read for a " +
                    Twine(O.Layout.SpanBytes) + "-byte span, " + Twine(Dst.size()) +
                    " to fill for " + Twine(O.Layout.Bytes));
  if (O.Layout.Elements == 0)
    return Error::success();
  // The same view, rebased onto the local copy of the span it covers.
  std::vector<char> LocalBytes = O.DescBytes;
  MemrefDesc Local(LocalBytes.data(), O.Rank);
  Local.setAligned(const_cast<uint8_t *>(Span.data()));
  Local.setOffset(O.desc().offset() - O.Layout.FirstElement);
  packAll(Local, O.ElemSize, O.Layout, Dst.data());
  return Error::success();
}

} // namespace catalyst::remote
