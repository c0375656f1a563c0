//===- ZeroCopyTransfer.cpp - One round trip, payloads out of line --------===//

#include "ZeroCopyTransfer.h"

#include "CheckedCall.h"
#include "PhaseClock.h"
#include "ZeroCopyResult.h"
#include "wire/Protocol.h"
#include "wire/SourceOrder.h"
#include "wire/SpsCheck.h"

#include <sys/uio.h>
#include <utility>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

using namespace wire;

namespace {

// The executor's functions and the service instances they are called on
// (wire/Protocol.h).
struct SlabCalls {
  ExecutorAddr Reserver, Reserve; // the path's: slabs or shared slabs
  ExecutorAddr Slabs, Release;
};

SlabPool::Backend slabBackend(ExecutorProcessControl &EPC, const SlabCalls &C) {
  SlabPool::Backend B;
  B.Reserve = [&EPC, C](uint64_t Bytes) -> Expected<ExecutorAddr> {
    Expected<ExecutorAddr> Base((ExecutorAddr()));
    if (auto Err = callChecked<SPSSlabReserveSig>(EPC, C.Reserve, SlabReserveName, Base, C.Reserver,
                                                  Bytes))
      return Err;
    return Base;
  };
  B.Release = [&EPC, C](ExecutorAddr Base, uint64_t) -> Error {
    Error Result = Error::success();
    if (auto Err =
            callChecked<SPSSlabReleaseSig>(EPC, C.Release, SlabReleaseName, Result, C.Slabs, Base))
      return joinErrors(std::move(Err), std::move(Result));
    return Result;
  };
  return B;
}

// Fails, naming both versions, unless the executor advertises the zero-copy
// version this host speaks.
Error checkVersion(ExecutorProcessControl &EPC) {
  uint32_t Theirs = bootstrapValue<SPSProtocolValue, uint32_t>(EPC, ZeroCopyKey).value_or(0);
  if (Theirs != ZeroCopyVersion)
    return createStringError(inconvertibleErrorCode(),
                             "the executor advertises zero-copy version %u; this host speaks %u",
                             Theirs, ZeroCopyVersion);
  return Error::success();
}

// Whether the executor's bootstrap map says it keeps residents, in the
// version this host speaks.
bool advertisesResidents(ExecutorProcessControl &EPC) {
  return bootstrapValue<SPSProtocolValue, uint32_t>(EPC, ResidentsKey) == ResidentsVersion;
}

Error notWaiting(uint64_t SeqNo) {
  return createStringError(inconvertibleErrorCode(),
                           "malformed launch result: the executor answered launch %llu, which "
                           "no launch is waiting for",
                           (unsigned long long)SeqNo);
}

} // namespace

// The launching thread may return, and its Waiting go, as soon as it sees
// Finished: W is not touched after that.
void ZeroCopyTransfer::resolve(Waiting &W, Error Err) {
  // Still the success it was made with: W is resolved once, by whoever took
  // it from Current.
  consumeError(std::move(W.Result));
  W.Result = std::move(Err);
  // Notified under M: the launching thread, which may close the session and
  // destroy this transfer once it sees Finished, takes M before it returns,
  // so the condition variable outlives the notification.
  sync::MutexLock Lock(M);
  W.Finished = true;
  Resolved.notify_all();
}

Expected<std::unique_ptr<ZeroCopyTransfer>>
ZeroCopyTransfer::Create(ExecutorProcessControl &EPC, SocketTransport &T, uint64_t SlabInitial,
                         uint64_t SlabCap, std::unique_ptr<PayloadPath> Path) {
  ExecutorAddr Service, Enable;
  SlabCalls Slab;
  if (auto Err = EPC.getBootstrapSymbols({{Service, ZeroCopyInstanceName},
                                          {Enable, ZeroCopyEnableName},
                                          {Slab.Reserver, Path->reserverName()},
                                          {Slab.Reserve, Path->reserveName()},
                                          {Slab.Slabs, SlabsInstanceName},
                                          {Slab.Release, SlabReleaseName}}))
    return Err;
  if (auto Err = checkVersion(EPC))
    return Err;
  Expected<uint32_t> Version(0u);
  if (auto Err = callChecked<SPSZeroCopyEnableSig>(EPC, Enable, ZeroCopyEnableName, Version,
                                                   Service, ZeroCopyVersion))
    return Err;
  if (!Version)
    return Version.takeError();
  if (*Version != ZeroCopyVersion)
    return createStringError(inconvertibleErrorCode(),
                             "executor speaks zero-copy version %u, this host %u", *Version,
                             ZeroCopyVersion);
  auto Backend = Path->wrap(slabBackend(EPC, Slab));
  std::unique_ptr<ZeroCopyTransfer> Z(new ZeroCopyTransfer(
      T, std::move(Backend), SlabInitial, SlabCap, std::move(Path), advertisesResidents(EPC)));
  T.setPayloadHandler(Z.get());
  if (auto Err = Z->Path->open(EPC))
    return Err;
  return Z;
}

ZeroCopyTransfer::~ZeroCopyTransfer() {
  T.setPayloadHandler(nullptr);
}

Error ZeroCopyTransfer::encodePlan(ExecutorAddr Entry, ArrayRef<CheckedInput> Inputs,
                                   const HostOutputs &Outputs) {
  Scratch &S = Work;
  S.Sizes.clear();
  S.ResidentInputs.clear();
  for (size_t I = 0; I < Inputs.size(); ++I) {
    S.Sizes.push_back(Inputs[I].Layout.Bytes);
    if (Inputs[I].Resident)
      S.ResidentInputs.emplace_back(I, Inputs[I].Resident);
  }
  if (auto Err = Pool.place(S.Sizes, S.Places))
    return Err;
  S.Inputs.resize(Inputs.size()); // kept from launch to launch, shapes and all
  for (size_t I = 0; I < Inputs.size(); ++I) {
    auto &[ElemSize, Shape, Place, Bytes] = S.Inputs[I];
    ElemSize = Inputs[I].ElemSize;
    Shape.resize(Inputs[I].Desc.rank());
    for (size_t K = 0; K < Shape.size(); ++K)
      Shape[K] = Inputs[I].Desc.size(K);
    // A resident is where the executor keeps it: no place, no bytes.
    Place = Inputs[I].Resident ? ExecutorAddr() : S.Places[I];
    Bytes = Inputs[I].Layout.Bytes;
  }
  S.Outputs.clear();
  for (size_t I = 0; I < Outputs.size(); ++I)
    S.Outputs.emplace_back(Outputs[I].Rank, Outputs[I].ElemSize);
  chooseSourceOrders(Inputs);
  S.KeptOutputs.clear();
  for (size_t I = 0; I < Outputs.size(); ++I)
    if (uint64_t Id = Outputs.keptAs(I))
      S.KeptOutputs.emplace_back(I, Id);
  if (S.ResidentInputs.empty() && S.KeptOutputs.empty()) {
    S.Plan.resize(SPSZeroCopyPlan::size(Entry, S.Inputs, S.Outputs, S.Reordered));
    sps::SPSOutputBuffer OB(S.Plan.data(), S.Plan.size());
    SPSZeroCopyPlan::serialize(OB, Entry, S.Inputs, S.Outputs, S.Reordered);
    return Error::success();
  }
  S.Plan.resize(SPSResidentLaunchPlan::size(Entry, S.Inputs, S.Outputs, S.Reordered,
                                            S.ResidentInputs, S.KeptOutputs));
  sps::SPSOutputBuffer OB(S.Plan.data(), S.Plan.size());
  SPSResidentLaunchPlan::serialize(OB, Entry, S.Inputs, S.Outputs, S.Reordered, S.ResidentInputs,
                                   S.KeptOutputs);
  return Error::success();
}

// Where the path has the executor transpose inputs as they land
// (PayloadPath::sendsSourceOrder()).
void ZeroCopyTransfer::chooseSourceOrders(ArrayRef<CheckedInput> Inputs) {
  Scratch &S = Work;
  S.Reordered.clear();
  if (!Path->sendsSourceOrder())
    return;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const CheckedInput &In = Inputs[I];
    if (In.Resident || !SourceOrder::worthSending(In.Desc, In.ElemSize, In.Layout))
      continue;
    Shape Strides(In.Desc.rank());
    for (size_t K = 0; K < Strides.size(); ++K)
      Strides[K] = In.Desc.stride(K);
    S.Reordered.emplace_back(I, std::move(Strides));
  }
}

// The payload: dense inputs straight from the caller's memory, strided ones
// through packers.
void ZeroCopyTransfer::collectPayload(ArrayRef<CheckedInput> Inputs, LaunchStats &Stats) {
  Scratch &S = Work;
  S.Parts.clear();
  S.Packers.clear();
  S.Packers.reserve(Inputs.size());
  size_t NextOrder = 0;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const CheckedInput &In = Inputs[I];
    bool Reordered =
        NextOrder < S.Reordered.size() && std::get<0>(S.Reordered[NextOrder]) == I && ++NextOrder;
    if (In.Layout.Dense || Reordered) {
      // A dense input, or a transposed one's array: its span, as it is (a
      // resident's is empty).
      S.Parts.push_back({static_cast<const char *>(In.Desc.aligned()) +
                             In.Layout.FirstElement * int64_t(In.ElemSize),
                         In.Layout.Bytes, nullptr});
      continue;
    }
    S.Packers.emplace_back(In.Desc, In.ElemSize, In.Layout);
    S.Parts.push_back({nullptr, In.Layout.Bytes, &S.Packers.back()});
    Stats.HostCopyBytes += In.Layout.Bytes;
  }
}

uint64_t ZeroCopyTransfer::largestRequest(ArrayRef<CheckedInput> Inputs) const {
  return Path->largestRequest(Inputs);
}

Error ZeroCopyTransfer::launch(ExecutorAddr Entry, ArrayRef<CheckedInput> Inputs,
                               HostOutputs &Outputs, LaunchStats &Stats, LaunchTimeline &When) {
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
  W.When = &When;
  return sendAndWait(W, Stats, [&](uint64_t SeqNo) {
    return Path->send(T, SeqNo, Work.Plan, Work.Parts, Work.Places, Stats);
  });
}

Expected<ResidentReply> ZeroCopyTransfer::request(PayloadOpcode OpC, ArrayRef<char> Plan,
                                                  ArrayRef<PayloadPart> Parts, LaunchStats &Stats,
                                                  MutableArrayRef<char> Into) {
  if (!Residents)
    return createStringError(inconvertibleErrorCode(),
                             "the executor keeps no resident tensors (it is older than this "
                             "host, or not catalyst-remote's)");
  ResidentReply Reply;
  LaunchTimeline When;
  Waiting W;
  W.Stats = &Stats;
  W.When = &When;
  W.Reply = &Reply;
  W.Fetch = OpC == PayloadOpcode::Fetch;
  W.Into = Into;
  if (auto Err = sendAndWait(
          W, Stats, [&](uint64_t SeqNo) { return T.sendWithPayload(OpC, SeqNo, Plan, Parts); }))
    return Err;
  return Reply;
}

Error ZeroCopyTransfer::sendAndWait(Waiting &W, LaunchStats &Stats,
                                    function_ref<Error(uint64_t SeqNo)> Send) {
  {
    sync::MutexLock Lock(M);
    if (Gone)
      return createStringError(inconvertibleErrorCode(), "connection lost");
    W.SeqNo = NextSeqNo++;
    Current = &W;
  }
  auto Sent = W.When->Send = PhaseClock::now();
  Error SendErr = Send(W.SeqNo);
  if (SendErr && take(W.SeqNo, /*Placed=*/false)) {
    // Nobody resolved W: its Result is still the success it was made with.
    consumeError(std::move(W.Result));
    return SendErr;
  }
  if (!SendErr)
    Stats.Phases.SendNs += nsSince(Sent);
  T.readUntil([&W] { return W.Finished.load(); });
  // Usually done already; if the connection broke, the reader thread
  // resolves W as it ends the session.
  sync::UniqueLock Lock(M);
  Resolved.wait(Lock, [&W] { return W.Finished.load(); });
  if (SendErr) {
    // The reader resolved W: with "connection lost" on the disconnect the
    // failed send caused, or with the result it was already placing when
    // the send failed (take()). The send's error says why.
    consumeError(std::move(W.Result));
    return SendErr;
  }
  return std::move(W.Result);
}

// Takes the waiting launch if SeqNo is its. A launch taken back after its
// send failed (Placed false) is left where it is once the reader claimed
// it: W must outlive the reader's writing into it, and finish() or, if the
// read fails, disconnected() resolves it.
ZeroCopyTransfer::Waiting *ZeroCopyTransfer::take(uint64_t SeqNo, bool Placed) {
  sync::MutexLock Lock(M);
  Waiting *W =
      Current && Current->SeqNo == SeqNo && (Placed || !Current->Claimed) ? Current : nullptr;
  if (W)
    Current = nullptr;
  return W;
}

// Decodes the result plan and points each output's bytes at a fresh host
// buffer for it.
Error ZeroCopyTransfer::placeOutputs(Waiting &W, PayloadOpcode OpC, ArrayRef<char> Plan,
                                     uint64_t PayloadBytes, std::vector<iovec> &Dst) {
  ZeroCopyResult &R = Work.Result;
  if (auto Err = Path->receive(OpC, Plan, PayloadBytes, *W.Outputs, R, *W.Stats, Dst))
    return Err;
  if (!R.RemoteError.empty()) {
    W.RemoteError = std::move(R.RemoteError);
    return Error::success();
  }
  PhaseTimes &P = W.Stats->Phases;
  P.CopyInNs += R.CopyInNs;
  P.KernelNs += R.KernelNs;
  P.CopyOutNs += R.CopyOutNs;
  W.Stats->ExecutorCopyBytes += R.ExecutorCopyBytes;
  W.When->ExecutorStartNs = R.StartNs;
  return Error::success();
}

// Decodes a resident request's reply, and points a fetch's values at the
// caller's buffer, which must be their size exactly.
Error ZeroCopyTransfer::placeReply(Waiting &W, ArrayRef<char> Plan, uint64_t PayloadBytes,
                                   std::vector<iovec> &Dst) {
  auto R = decodeResidentReply(Plan, PayloadBytes);
  if (!R)
    return R.takeError();
  // Values come with a served fetch only, exactly as many as asked for.
  uint64_t Asked = W.Fetch && R->Error.empty() ? W.Into.size() : 0;
  if (PayloadBytes != Asked)
    return createStringError(inconvertibleErrorCode(),
                             "malformed resident reply from the executor: %llu bytes of values, "
                             "where %llu were asked for",
                             (unsigned long long)PayloadBytes, (unsigned long long)Asked);
  *W.Reply = std::move(*R);
  if (PayloadBytes)
    Dst.push_back({W.Into.data(), W.Into.size()});
  return Error::success();
}

Expected<std::vector<iovec>> ZeroCopyTransfer::place(PayloadOpcode OpC, uint64_t SeqNo,
                                                     ArrayRef<char> Plan, uint64_t PayloadBytes) {
  if (OpC == PayloadOpcode::SharedSlab) {
    if (!Path->takesSlabs())
      return createStringError(inconvertibleErrorCode(), "this session maps no shared memory");
    return std::vector<iovec>(); // adopted in finish(), with its descriptor
  }
  bool Result = OpC == PayloadOpcode::LaunchResult || OpC == PayloadOpcode::SharedResult;
  bool Reply = OpC == PayloadOpcode::ResidentReply;
  Waiting *W = nullptr;
  {
    // Claimed, so that a launch whose send fails meanwhile does not return
    // (and free W and its outputs) while this thread writes into them. A
    // launch takes a result only, a resident request a reply only.
    sync::MutexLock Lock(M);
    if (Current && Current->SeqNo == SeqNo && (Current->Reply ? Reply : Result)) {
      W = Current;
      W->Claimed = true;
    }
  }
  if (!W)
    return notWaiting(SeqNo);
  W->Landing = PhaseClock::now();
  std::vector<iovec> Dst;
  if (auto Err = W->Reply ? placeReply(*W, Plan, PayloadBytes, Dst)
                          : placeOutputs(*W, OpC, Plan, PayloadBytes, Dst))
    return Err;
  return Dst;
}

void ZeroCopyTransfer::finish(PayloadOpcode OpC, uint64_t SeqNo, shared::WrapperFunctionBuffer Plan,
                              Error Err) {
  if (OpC == PayloadOpcode::SharedSlab) {
    if (Path->takesSlabs() && !Err)
      return Path->adopt(T, {Plan.data(), Plan.size()}, T.takeDescriptors());
    // Without shared memory, or with a payload: refused as a malformed
    // slab is, rather than taken for a launch's result.
    T.closeWith("the executor sent a shared slab this host cannot take: " +
                    toString(std::move(Err)) + "; this end closed the connection",
                FailureKind::Other);
    return;
  }
  Waiting *W = take(SeqNo, /*Placed=*/true);
  if (!W) {
    // A result no launch waits for (place() refused it, which is Err): the
    // executor broke the protocol. The launch waiting, if any, fails with
    // that rather than wait for a result that may never come, and the
    // connection ends, naming it to later calls. Without an error, place()
    // found the launch, which the connection's end has resolved since.
    if (!Err)
      return;
    std::string Why = toString(std::move(Err));
    {
      sync::MutexLock Lock(M);
      W = std::exchange(Current, nullptr);
    }
    T.closeWith(Why + "; this end closed the connection", FailureKind::Other);
    if (W)
      resolve(*W, createStringError(inconvertibleErrorCode(), Why));
    return;
  }
  W->Stats->Phases.ReceiveNs += nsSince(W->Landing);
  W->When->Receive = W->Landing;
  if (!Err && !W->RemoteError.empty())
    Err = createStringError(inconvertibleErrorCode(), W->RemoteError);
  resolve(*W, std::move(Err));
}

void ZeroCopyTransfer::disconnected() {
  Waiting *W;
  {
    sync::MutexLock Lock(M);
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
