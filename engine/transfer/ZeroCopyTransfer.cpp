//===- ZeroCopyTransfer.cpp - One round trip, payloads out of line --------===//

#include "ZeroCopyTransfer.h"

#include "../wire/Protocol.h"
#include "PhaseClock.h"

#include <sys/uio.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

using namespace wire;

namespace {

SlabPool::Backend slabBackend(ExecutorProcessControl &EPC, ExecutorAddr Reserve,
                              ExecutorAddr Release) {
  SlabPool::Backend B;
  B.Reserve = [&EPC, Reserve](uint64_t Bytes) -> Expected<ExecutorAddr> {
    Expected<ExecutorAddr> Base((ExecutorAddr()));
    if (auto Err = EPC.callSPSWrapper<SPSSlabReserveSig>(Reserve, Base, Bytes))
      return Err;
    return Base;
  };
  B.Release = [&EPC, Release](ExecutorAddr Base, uint64_t) -> Error {
    Error Result = Error::success();
    if (auto Err = EPC.callSPSWrapper<SPSSlabReleaseSig>(Release, Result, Base))
      return joinErrors(std::move(Err), std::move(Result));
    return Result;
  };
  return B;
}

Error malformedResult(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "malformed launch result: " + What);
}

} // namespace

// The launching thread may return, and its Waiting go, as soon as it sees
// Finished: W is not touched after that.
void ZeroCopyTransfer::resolve(Waiting &W, Error Err) {
  consumeError(std::move(W.Result));
  W.Result = std::move(Err);
  {
    std::lock_guard<std::mutex> Lock(M);
    W.Finished = true;
  }
  Resolved.notify_all();
}

Expected<std::unique_ptr<ZeroCopyTransfer>> ZeroCopyTransfer::Create(ExecutorProcessControl &EPC,
                                                                     SocketTransport &T,
                                                                     uint64_t SlabInitial,
                                                                     uint64_t SlabCap) {
  ExecutorAddr Enable, Reserve, Release;
  if (auto Err = EPC.getBootstrapSymbols(
          {{Enable, ZeroCopyEnableName}, {Reserve, SlabReserveName}, {Release, SlabReleaseName}}))
    return Err;
  uint32_t Version = 0;
  if (auto Err = EPC.callSPSWrapper<SPSZeroCopyEnableSig>(Enable, Version, ZeroCopyVersion))
    return Err;
  if (Version != ZeroCopyVersion)
    return createStringError(inconvertibleErrorCode(),
                             "executor speaks zero-copy version %u, this host %u", Version,
                             ZeroCopyVersion);
  std::unique_ptr<ZeroCopyTransfer> Z(
      new ZeroCopyTransfer(T, slabBackend(EPC, Reserve, Release), SlabInitial, SlabCap));
  T.setPayloadHandler(Z.get());
  return Z;
}

ZeroCopyTransfer::~ZeroCopyTransfer() {
  T.setPayloadHandler(nullptr);
}

Error ZeroCopyTransfer::encodePlan(ExecutorAddr Entry, ArrayRef<InputPlan> Inputs,
                                   const HostOutputs &Outputs) {
  Scratch &S = Work;
  S.Sizes.clear();
  for (const InputPlan &In : Inputs)
    S.Sizes.push_back(In.Layout.Bytes);
  if (auto Err = Pool.place(S.Sizes, S.Places))
    return Err;
  S.Inputs.clear();
  for (size_t I = 0; I < Inputs.size(); ++I) {
    std::vector<int64_t> Shape(Inputs[I].Desc.rank());
    for (size_t K = 0; K < Shape.size(); ++K)
      Shape[K] = Inputs[I].Desc.size(K);
    S.Inputs.emplace_back(Inputs[I].ElemSize, std::move(Shape), S.Places[I],
                          Inputs[I].Layout.Bytes);
  }
  S.Outputs.clear();
  for (size_t I = 0; I < Outputs.size(); ++I)
    S.Outputs.emplace_back(Outputs[I].Rank, Outputs[I].ElemSize);
  S.Plan.resize(SPSZeroCopyPlan::size(Entry, S.Inputs, S.Outputs));
  sps::SPSOutputBuffer OB(S.Plan.data(), S.Plan.size());
  SPSZeroCopyPlan::serialize(OB, Entry, S.Inputs, S.Outputs);
  return Error::success();
}

// The payload: dense inputs straight from the caller's memory, strided ones
// through packers.
void ZeroCopyTransfer::collectPayload(ArrayRef<InputPlan> Inputs, LaunchStats &Stats) {
  Scratch &S = Work;
  S.Parts.clear();
  S.Packers.clear();
  S.Packers.reserve(Inputs.size());
  for (const InputPlan &In : Inputs) {
    if (In.Layout.Dense) {
      S.Parts.push_back(
          {static_cast<const char *>(In.Desc.aligned()) + In.Desc.offset() * int64_t(In.ElemSize),
           In.Layout.Bytes, nullptr});
      continue;
    }
    S.Packers.emplace_back(In.Desc, In.ElemSize, In.Layout);
    S.Parts.push_back({nullptr, In.Layout.Bytes, &S.Packers.back()});
    Stats.HostCopyBytes += In.Layout.Bytes;
  }
}

Error ZeroCopyTransfer::launch(ExecutorAddr Entry, ArrayRef<InputPlan> Inputs, HostOutputs &Outputs,
                               LaunchStats &Stats) {
  auto Start = PhaseClock::now();
  if (auto Err = encodePlan(Entry, Inputs, Outputs))
    return Err;
  collectPayload(Inputs, Stats);
  Stats.SlabInUse = Pool.inUse();
  Stats.SlabHighWater = Pool.highWater();
  Stats.Phases.PlanNs += nsSince(Start);
  Waiting W;
  W.Outputs = &Outputs;
  W.Stats = &Stats;
  return sendAndWait(W, Stats);
}

Error ZeroCopyTransfer::sendAndWait(Waiting &W, LaunchStats &Stats) {
  {
    std::lock_guard<std::mutex> Lock(M);
    if (Gone)
      return createStringError(inconvertibleErrorCode(), "connection lost");
    W.SeqNo = NextSeqNo++;
    Current = &W;
  }
  auto Send = PhaseClock::now();
  if (auto Err = T.sendWithPayload(PayloadOpcode::Launch, W.SeqNo, Work.Plan, Work.Parts)) {
    // Unless the reader already failed it on disconnect, fail it here.
    if (take(W.SeqNo)) {
      consumeError(std::move(W.Result));
      return Err;
    }
    consumeError(std::move(Err));
  } else {
    Stats.Phases.SendNs += nsSince(Send);
  }
  T.readUntil([&W] { return W.Finished.load(); });
  // Usually done already; if the connection broke, the reader thread
  // resolves W as it ends the session.
  std::unique_lock<std::mutex> Lock(M);
  Resolved.wait(Lock, [&W] { return W.Finished.load(); });
  return std::move(W.Result);
}

// Takes the waiting launch if SeqNo is its.
ZeroCopyTransfer::Waiting *ZeroCopyTransfer::take(uint64_t SeqNo) {
  std::lock_guard<std::mutex> Lock(M);
  Waiting *W = Current && Current->SeqNo == SeqNo ? Current : nullptr;
  if (W)
    Current = nullptr;
  return W;
}

// Decodes the result plan and points each output's bytes at a fresh host
// buffer for it.
Error ZeroCopyTransfer::placeOutputs(Waiting &W, ArrayRef<char> Plan, uint64_t PayloadBytes,
                                     std::vector<iovec> &Dst) {
  std::string Error;
  std::vector<ZeroCopyOutput> &Outs = Work.Results;
  Outs.clear(); // SPS appends to the sequences it decodes into
  uint64_t CopyInNs, KernelNs, CopyOutNs, Copied;
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (!SPSZeroCopyResult::deserialize(IB, Error, Outs, CopyInNs, KernelNs, CopyOutNs, Copied))
    return malformedResult("undecodable plan");
  if (!Error.empty()) {
    W.RemoteError = std::move(Error);
    return PayloadBytes ? malformedResult("an error with a payload") : llvm::Error::success();
  }
  HostOutputs &Outputs = *W.Outputs;
  if (Outs.size() != Outputs.size())
    return malformedResult(Twine(Outs.size()) + " outputs, expected " + Twine(Outputs.size()));
  uint64_t Total = 0;
  for (size_t I = 0; I < Outs.size(); ++I) {
    auto Buf = Outputs.allocate(I, std::get<0>(Outs[I]));
    if (!Buf)
      return Buf.takeError();
    if (Buf->size() != std::get<1>(Outs[I]))
      return malformedResult("output " + Twine(I) + " has the wrong byte count");
    if (!Buf->empty())
      Dst.push_back({Buf->data(), Buf->size()});
    Total += Buf->size();
  }
  if (Total != PayloadBytes)
    return malformedResult("payload of " + Twine(PayloadBytes) + " bytes for " + Twine(Total));
  PhaseTimes &P = W.Stats->Phases;
  P.CopyInNs += CopyInNs;
  P.KernelNs += KernelNs;
  P.CopyOutNs += CopyOutNs;
  W.Stats->ExecutorCopyBytes += Copied;
  return llvm::Error::success();
}

Expected<std::vector<iovec>> ZeroCopyTransfer::place(PayloadOpcode OpC, uint64_t SeqNo,
                                                     ArrayRef<char> Plan, uint64_t PayloadBytes) {
  Waiting *W;
  {
    std::lock_guard<std::mutex> Lock(M);
    W = Current;
  }
  if (OpC != PayloadOpcode::LaunchResult || !W || W->SeqNo != SeqNo)
    return malformedResult("no launch " + Twine(SeqNo) + " is waiting");
  W->Landing = PhaseClock::now();
  std::vector<iovec> Dst;
  if (auto Err = placeOutputs(*W, Plan, PayloadBytes, Dst))
    return Err;
  return Dst;
}

void ZeroCopyTransfer::finish(PayloadOpcode, uint64_t SeqNo, shared::WrapperFunctionBuffer,
                              Error Err) {
  Waiting *W = take(SeqNo);
  if (!W) {
    consumeError(std::move(Err));
    return;
  }
  W->Stats->Phases.ReceiveNs += nsSince(W->Landing);
  if (!Err && !W->RemoteError.empty())
    Err = createStringError(inconvertibleErrorCode(), W->RemoteError);
  resolve(*W, std::move(Err));
}

void ZeroCopyTransfer::disconnected() {
  Waiting *W;
  {
    std::lock_guard<std::mutex> Lock(M);
    Gone = true;
    W = std::exchange(Current, nullptr);
  }
  if (W)
    resolve(*W, createStringError(inconvertibleErrorCode(), "connection lost"));
}

Error ZeroCopyTransfer::close() {
  return Pool.release();
}

} // namespace catalyst::remote
