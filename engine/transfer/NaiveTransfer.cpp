//===- NaiveTransfer.cpp - Catalyst's upstream launch protocol ------------===//

#include "NaiveTransfer.h"

#include "../wire/Protocol.h"

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
  ~Launch() { consumeError(freeAll()); }

  Expected<ExecutorAddr> alloc(uint64_t Bytes) {
    ExecutorAddr A;
    if (auto Err = EPC.callSPSWrapper<SPSAllocSig>(S.Alloc, A, std::max<uint64_t>(Bytes, 1)))
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
    auto R = EPC.getMemoryAccess().readBuffers({ExecutorAddrRange(From, ExecutorAddrDiff(Bytes))});
    if (!R)
      return R.takeError();
    return std::move(R->front());
  }

  Error free(ExecutorAddr A) { return EPC.callSPSWrapper<SPSFreeSig>(S.Free, A); }

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
std::vector<char> denseDescriptor(const InputPlan &In, ExecutorAddr Values) {
  std::vector<char> Bytes(MemrefDesc::byteSize(In.Desc.rank()));
  MemrefDesc D(Bytes.data(), In.Desc.rank());
  for (size_t I = 0; I < D.rank(); ++I)
    D.setSize(I, In.Desc.size(I));
  D.rewriteDense(Values.toPtr<void *>());
  return Bytes;
}

// Values to send: the caller's memory when dense, else a packed copy.
ArrayRef<char> denseValues(const InputPlan &In, std::vector<char> &Scratch) {
  const char *Base = static_cast<const char *>(In.Desc.aligned());
  if (In.Layout.Dense)
    return {Base + In.Desc.offset() * int64_t(In.ElemSize), size_t(In.Layout.Bytes)};
  Scratch.resize(In.Layout.Bytes);
  packAll(In.Desc, In.ElemSize, In.Layout, Scratch.data());
  return Scratch;
}

// Reads the values Remote (a local copy of a returned descriptor) describes
// and packs them into output I's host buffer.
Error fetchOutput(Launch &L, const MemrefDesc &Remote, size_t I, HostOutputs &Outputs,
                  LaunchStats &Stats) {
  size_t ElemSize = Outputs[I].ElemSize;
  auto Layout = layoutOf(Remote, ElemSize, {"output", I});
  if (!Layout)
    return Layout.takeError();
  std::vector<int64_t> Sizes(Remote.rank());
  for (size_t K = 0; K < Remote.rank(); ++K)
    Sizes[K] = Remote.size(K);
  auto Buf = Outputs.allocate(I, Sizes);
  if (!Buf || Layout->Elements == 0)
    return Buf.takeError();
  auto First = ExecutorAddr::fromPtr(Remote.aligned()) + Layout->FirstElement * int64_t(ElemSize);
  auto Span = L.read(First, Layout->SpanBytes);
  if (!Span)
    return Span.takeError();
  // The same view, rebased onto the local copy of the span it covers.
  std::vector<char> LocalDesc(static_cast<char *>(Remote.base()),
                              static_cast<char *>(Remote.base()) +
                                  MemrefDesc::byteSize(Remote.rank()));
  MemrefDesc Local(LocalDesc.data(), Remote.rank());
  Local.setAligned(Span->data());
  Local.setOffset(Remote.offset() - Layout->FirstElement);
  packAll(Local, ElemSize, *Layout, Buf->data());
  Stats.HostCopyBytes += 2 * Layout->SpanBytes + Layout->Bytes;
  Stats.ExecutorCopyBytes += Layout->SpanBytes;
  return Error::success();
}

// Frees each buffer the kernel returned, once: never an input's, never a
// constant global.
Error freeReturned(Launch &L, ArrayRef<MemrefDesc> Returned, ArrayRef<ExecutorAddr> Inputs) {
  DenseSet<uint64_t> Freed;
  for (ExecutorAddr A : Inputs)
    Freed.insert(A.getValue());
  for (const MemrefDesc &D : Returned) {
    uint64_t Owner = reinterpret_cast<uint64_t>(D.allocated());
    if (Owner && Owner != ConstantGlobalMarker && Freed.insert(Owner).second)
      if (auto Err = L.free(ExecutorAddr(Owner)))
        return Err;
  }
  return Error::success();
}

} // namespace

// One input's values per write.
uint64_t NaiveTransfer::largestRequest(ArrayRef<InputPlan> Inputs) const {
  uint64_t Largest = 0;
  for (const InputPlan &In : Inputs)
    Largest = std::max<uint64_t>(Largest, In.Layout.Bytes);
  return Largest + 4096;
}

// User-space copies, counted from the code paths: each write is serialized
// by the host and copied into place by the executor; each read is
// serialized by the executor, then copied out of the message, out of the
// decoded vector and into the host buffer by the host.
Error NaiveTransfer::launch(ExecutorAddr Entry, ArrayRef<InputPlan> Inputs, HostOutputs &Outputs,
                            LaunchStats &Stats) {
  Launch L(EPC, S);
  std::vector<ExecutorAddr> InputValues, Args;
  for (const InputPlan &In : Inputs) {
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
  if (auto Err = EPC.callSPSWrapper<SPSInvokeSig>(S.Invoke, Entry, std::vector{*Rv, *Av}))
    return Err;
  auto ReturnedBytes = L.read(*Rv, RvBytes);
  if (!ReturnedBytes)
    return ReturnedBytes.takeError();

  // Read every output before freeing any: outputs may share a buffer.
  std::vector<MemrefDesc> Returned;
  char *Cursor = reinterpret_cast<char *>(ReturnedBytes->data());
  for (size_t I = 0; I < Outputs.size(); ++I) {
    Returned.emplace_back(Cursor, Outputs[I].Rank);
    Cursor += MemrefDesc::byteSize(Outputs[I].Rank);
    if (auto Err = fetchOutput(L, Returned.back(), I, Outputs, Stats))
      return Err;
  }
  if (auto Err = freeReturned(L, Returned, InputValues))
    return Err;
  return L.freeAll();
}

} // namespace catalyst::remote
