//===- OneCallTransfer.cpp - A launch in one call to the executor ---------===//

#include "OneCallTransfer.h"

#include "../wire/Protocol.h"
#include "../wire/WireCodec.h"

#include <memory>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

namespace {

using namespace wire;

std::vector<int64_t> sizesOf(const MemrefDesc &D) {
  std::vector<int64_t> S(D.rank());
  for (size_t I = 0; I < D.rank(); ++I)
    S[I] = D.size(I);
  return S;
}

std::vector<std::tuple<uint64_t, uint64_t>> outputSpecs(const HostOutputs &Outputs) {
  std::vector<std::tuple<uint64_t, uint64_t>> Specs;
  for (size_t I = 0; I < Outputs.size(); ++I)
    Specs.emplace_back(Outputs[I].Rank, Outputs[I].ElemSize);
  return Specs;
}

using SPSOutputSpecs = sps::SPSSequence<SPSLaunchOutputSpec>;

size_t requestSize(ExecutorAddr Entry, ArrayRef<InputPlan> Inputs,
                   const std::vector<std::tuple<uint64_t, uint64_t>> &Specs) {
  size_t N = sps::SPSArgList<sps::SPSExecutorAddr, uint64_t>::size(Entry, uint64_t(Inputs.size()));
  for (const InputPlan &In : Inputs)
    N += SPSLaunchInputHead::size(uint64_t(In.ElemSize), sizesOf(In.Desc), In.Layout.Bytes) +
         In.Layout.Bytes;
  return N + sps::SPSArgList<SPSOutputSpecs>::size(Specs);
}

// Encodes the request with each input's values packed straight into it.
std::vector<char> encodeRequest(ExecutorAddr Entry, ArrayRef<InputPlan> Inputs,
                                const HostOutputs &Outputs) {
  auto Specs = outputSpecs(Outputs);
  std::vector<char> Buf(requestSize(Entry, Inputs, Specs));
  WireWriter W(Buf.data(), Buf.size());
  W.put<sps::SPSExecutorAddr, uint64_t>(Entry, uint64_t(Inputs.size()));
  for (const InputPlan &In : Inputs) {
    W.put<uint64_t, sps::SPSSequence<int64_t>, uint64_t>(uint64_t(In.ElemSize), sizesOf(In.Desc),
                                                         In.Layout.Bytes);
    packAll(In.Desc, In.ElemSize, In.Layout, W.take(In.Layout.Bytes));
  }
  W.put<SPSOutputSpecs>(Specs);
  assert(W.full() && "request sized exactly");
  return Buf;
}

Error malformed(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "malformed launch reply: " + What);
}

Error decodeReply(const shared::WrapperFunctionBuffer &Reply, HostOutputs &Outputs) {
  WireReader R(Reply.data(), Reply.size());
  bool Ok = false;
  if (!R.get<bool>(Ok))
    return malformed("no status");
  if (!Ok) {
    std::string Msg;
    if (!R.get<sps::SPSString>(Msg))
      return malformed("no error text");
    return createStringError(inconvertibleErrorCode(), Msg);
  }
  uint64_t Count = 0;
  if (!R.get<uint64_t>(Count) || Count != Outputs.size())
    return malformed("expected " + Twine(Outputs.size()) + " outputs");
  for (size_t I = 0; I < Outputs.size(); ++I) {
    std::vector<int64_t> Sizes;
    uint64_t Bytes = 0;
    if (!R.get<sps::SPSSequence<int64_t>, uint64_t>(Sizes, Bytes))
      return malformed("output " + Twine(I) + " has no shape");
    auto Buf = Outputs.allocate(I, Sizes);
    if (!Buf)
      return Buf.takeError();
    const char *Values = R.take(Bytes);
    if (!Values || Bytes != Buf->size())
      return malformed("output " + Twine(I) + " has the wrong byte count");
    std::memcpy(Buf->data(), Values, Bytes);
  }
  return Error::success();
}

} // namespace

Error OneCallTransfer::launch(ExecutorAddr Entry, ArrayRef<InputPlan> Inputs,
                              HostOutputs &Outputs) {
  std::vector<char> Request = encodeRequest(Entry, Inputs, Outputs);
  auto Reply = EPC.callWrapper(LaunchFn, Request);
  if (const char *Err = Reply.getOutOfBandError())
    return createStringError(inconvertibleErrorCode(), Err);
  return decodeReply(Reply, Outputs);
}

} // namespace catalyst::remote
