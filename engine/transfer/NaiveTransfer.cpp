//===- NaiveTransfer.cpp - Catalyst's upstream launch protocol ------------===//

#include "NaiveTransfer.h"

#include "CheckedCall.h"
#include "OutputReplies.h"
#include "PhaseClock.h"
#include "wire/Protocol.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ExecutionEngine/Orc/MemoryAccess.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

using namespace wire;

namespace {

// One launch's remote buffers; every one is freed when the launch ends,
// however it ends, unless the connection is gone.
class Launch {
public:
  Launch(ExecutorProcessControl &EPC, const UpstreamServices &S) : EPC(EPC), S(S) {}
  // A launch that failed already returned its own error, which matters
  // more; freeing what is left is best effort (a gone connection frees it).
  ~Launch() { consumeError(freeAll()); }

  Expected<ExecutorAddr> alloc(uint64_t Bytes) {
    ExecutorAddr A;
    if (auto Err =
            callChecked<SPSAllocSig>(EPC, S.Alloc, AllocName, A, std::max<uint64_t>(Bytes, 1)))
      return Err;
    if (!A)
      return createStringError(std::errc::not_enough_memory,
                               "executor could not allocate %llu bytes", (unsigned long long)Bytes);
    Owned.push_back(A);
    return A;
  }

  Error write(ExecutorAddr To, ArrayRef<char> Bytes) {
    if (Bytes.empty())
      return Error::success();
    tpctypes::BufferWrite W{To, Bytes};
    return EPC.getMemoryAccess().writeBuffers(W);
  }

  Expected<std::vector<uint8_t>> read(ExecutorAddr From, uint64_t Bytes) {
    ExecutorAddrRange Span(From, ExecutorAddrDiff(Bytes));
    auto R = readBuffersChecked(EPC, Span);
    if (!R)
      return R.takeError();
    if (auto Err = checkRead(*R, Span))
      return Err;
    return std::move(R->front());
  }

  Error free(ExecutorAddr A) { return callChecked<SPSFreeSig>(EPC, S.Free, FreeName, A); }

  Error freeAll() {
    Error Err = Error::success();
    for (ExecutorAddr A : Owned)
      Err = joinErrors(std::move(Err), free(A));
    Owned.clear();
    return Err;
  }

private:
  ExecutorProcessControl &EPC;
  const UpstreamServices &S;
  std::vector<ExecutorAddr> Owned;
};

// The bytes of a descriptor for Values, dense row-major, shaped like In.
std::vector<char> denseDescriptor(const CheckedInput &In, ExecutorAddr Values) {
  std::vector<char> Bytes(MemrefDesc::byteSize(In.Desc.rank()));
  MemrefDesc D(Bytes.data(), In.Desc.rank());
  for (size_t I = 0; I < D.rank(); ++I)
    D.setSize(I, In.Desc.size(I));
  D.rewriteDense(Values.toPtr<void *>());
  return Bytes;
}

// Values to send: the caller's memory when dense, else a packed copy.
ArrayRef<char> denseValues(const CheckedInput &In, std::vector<char> &Scratch) {
  const char *Base = static_cast<const char *>(In.Desc.aligned());
  if (In.Layout.Dense)
    return {Base + In.Desc.offset() * int64_t(In.ElemSize), size_t(In.Layout.Bytes)};
  Scratch.resize(In.Layout.Bytes);
  packAll(In.Desc, In.ElemSize, In.Layout, Scratch.data());
  return Scratch;
}

// Reads output I's values, as the executor returned it, into its host
// buffer.
Error fetchOutput(Launch &L, const ReturnedOutput &O, size_t I, HostOutputs &Outputs,
                  LaunchStats &Stats) {
  auto Buf = Outputs.allocate(I, O.sizes());
  if (!Buf || O.Layout.Elements == 0)
    return Buf.takeError();
  auto Span = L.read(O.Span.Start, O.Layout.SpanBytes);
  if (!Span)
    return Span.takeError();
  if (auto Err = unpackOutput(O, I, *Span, *Buf))
    return Err;
  Stats.HostCopyBytes += 2 * O.Layout.SpanBytes + O.Layout.Bytes;
  Stats.ExecutorCopyBytes += O.Layout.SpanBytes;
  return Error::success();
}

// The buffers the kernel says it allocated, read from the descriptors it
// returned whether or not they are valid (as far as Rv holds them): they
// are the executor's to free either way.
std::vector<uint64_t> ownersOf(ArrayRef<char> Rv, const HostOutputs &Outputs) {
  std::vector<uint64_t> Owners;
  size_t At = 0;
  for (size_t I = 0; I < Outputs.size(); ++I) {
    size_t Bytes = MemrefDesc::byteSize(Outputs[I].Rank);
    if (Rv.size() - At < Bytes)
      break;
    MemrefDesc D(const_cast<char *>(Rv.data() + At), Outputs[I].Rank); // only read
    Owners.push_back(reinterpret_cast<uint64_t>(D.allocated()));
    At += Bytes;
  }
  return Owners;
}

// Frees each buffer the kernel returned, once: never an input's, never a
// constant global.
Error freeReturned(Launch &L, ArrayRef<uint64_t> Owners, ArrayRef<ExecutorAddr> Inputs) {
  DenseSet<uint64_t> Freed;
  for (ExecutorAddr A : Inputs)
    Freed.insert(A.getValue());
  for (uint64_t Owner : Owners)
    if (Owner && Owner != ConstantGlobalMarker && Freed.insert(Owner).second)
      if (auto Err = L.free(ExecutorAddr(Owner)))
        return Err;
  return Error::success();
}

// Checks the returned descriptors and reads every output before any buffer
// is freed: outputs may share one.
Error fetchOutputs(Launch &L, ArrayRef<char> Rv, HostOutputs &Outputs, LaunchStats &Stats) {
  auto Returned = decodeReturned(Rv, Outputs.specs());
  if (!Returned)
    return Returned.takeError();
  for (size_t I = 0; I < Outputs.size(); ++I)
    if (auto Err = fetchOutput(L, (*Returned)[I], I, Outputs, Stats))
      return Err;
  return Error::success();
}

} // namespace

// One input's values per write.
uint64_t NaiveTransfer::largestRequest(ArrayRef<CheckedInput> Inputs) const {
  uint64_t Largest = 0;
  for (const CheckedInput &In : Inputs)
    Largest = std::max<uint64_t>(Largest, In.Layout.Bytes);
  return Largest + 4096;
}

// User-space copies, counted from the code paths: each write is serialized
// by the host and copied into place by the executor; each read is
// serialized by the executor, then copied out of the message, out of the
// decoded vector and into the host buffer by the host.
Error NaiveTransfer::launch(ExecutorAddr Entry, ArrayRef<CheckedInput> Inputs, HostOutputs &Outputs,
                            LaunchStats &Stats, LaunchTimeline &When) {
  Launch L(EPC, S);
  When.Send = PhaseClock::now();
  std::vector<ExecutorAddr> InputValues, Args;
  for (const CheckedInput &In : Inputs) {
    std::vector<char> Scratch;
    auto Values = L.alloc(In.Layout.Bytes);
    if (!Values)
      return Values.takeError();
    if (auto Err = L.write(*Values, denseValues(In, Scratch)))
      return Err;
    Stats.HostCopyBytes += Scratch.size() + In.Layout.Bytes;
    Stats.ExecutorCopyBytes += In.Layout.Bytes;
    std::vector<char> Desc = denseDescriptor(In, *Values);
    auto DescAddr = L.alloc(Desc.size());
    if (!DescAddr)
      return DescAddr.takeError();
    if (auto Err = L.write(*DescAddr, Desc))
      return Err;
    InputValues.push_back(*Values);
    Args.push_back(*DescAddr);
  }

  auto Av = L.alloc(Args.size() * sizeof(uint64_t));
  if (!Av)
    return Av.takeError();
  if (auto Err = L.write(
          *Av, {reinterpret_cast<const char *>(Args.data()), Args.size() * sizeof(uint64_t)}))
    return Err;
  uint64_t RvBytes = 0;
  for (size_t I = 0; I < Outputs.size(); ++I)
    RvBytes += MemrefDesc::byteSize(Outputs[I].Rank);
  auto Rv = L.alloc(RvBytes);
  if (!Rv)
    return Rv.takeError();
  Stats.Phases.SendNs += nsSince(When.Send);
  When.Invoke = PhaseClock::now();
  if (auto Err = callChecked<SPSInvokeSig>(EPC, S.Invoke, InvokeName, Entry, std::vector{*Rv, *Av}))
    return Err;
  When.InvokeNs = nsSince(When.Invoke);
  When.Receive = PhaseClock::now();
  auto ReturnedBytes = L.read(*Rv, RvBytes);
  if (!ReturnedBytes)
    return ReturnedBytes.takeError();
  ArrayRef<char> Returned(reinterpret_cast<const char *>(ReturnedBytes->data()),
                          ReturnedBytes->size());
  // What the kernel allocated is freed even when its outputs are refused.
  Error Err = fetchOutputs(L, Returned, Outputs, Stats);
  Err = joinErrors(std::move(Err), freeReturned(L, ownersOf(Returned, Outputs), InputValues));
  if (Err)
    return Err;
  if (auto Err = L.freeAll())
    return Err;
  Stats.Phases.ReceiveNs += nsSince(When.Receive);
  return Error::success();
}

} // namespace catalyst::remote
