//===- BatchedTransfer.cpp - Three round trips, standard services ---------===//

#include "BatchedTransfer.h"

#include "CheckedCall.h"
#include "OutputReplies.h"
#include "PhaseClock.h"
#include "wire/Protocol.h"

#include "llvm/ExecutionEngine/Orc/MemoryAccess.h"
#include "llvm/ExecutionEngine/Orc/Shared/OrcRTBridge.h"

#include <chrono>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

using namespace wire;

namespace {

// The bytes of a dense descriptor of Values shaped like In.
void denseDescriptor(const CheckedInput &In, ExecutorAddr Values, std::vector<char> &Out) {
  size_t At = Out.size();
  Out.resize(At + MemrefDesc::byteSize(In.Desc.rank()));
  MemrefDesc D(Out.data() + At, In.Desc.rank());
  for (size_t I = 0; I < D.rank(); ++I)
    D.setSize(I, In.Desc.size(I));
  D.rewriteDense(Values.toPtr<void *>());
}

} // namespace

Expected<SlabPool::Backend> executorMemoryBackend(ExecutorProcessControl &EPC) {
  ExecutorAddr Instance, Reserve, Release;
  if (auto Err =
          EPC.getBootstrapSymbols({{Instance, rt::SimpleExecutorMemoryManagerInstanceName},
                                   {Reserve, rt::SimpleExecutorMemoryManagerReserveWrapperName},
                                   {Release, rt::SimpleExecutorMemoryManagerReleaseWrapperName}}))
    return Err;
  SlabPool::Backend B;
  B.Reserve = [&EPC, Instance, Reserve](uint64_t Bytes) -> Expected<ExecutorAddr> {
    Expected<ExecutorAddr> Base((ExecutorAddr()));
    if (auto Err = callChecked<rt::SPSSimpleRemoteMemoryMapReserveSignature>(
            EPC, Reserve, rt::SimpleExecutorMemoryManagerReserveWrapperName, Base, Instance, Bytes))
      return Err;
    return Base;
  };
  B.Release = [&EPC, Instance, Release](ExecutorAddr Base, uint64_t) -> Error {
    Error Result = Error::success();
    if (auto Err = callChecked<rt::SPSSimpleRemoteMemoryMapReleaseSignature>(
            EPC, Release, rt::SimpleExecutorMemoryManagerReleaseWrapperName, Result, Instance,
            std::vector<ExecutorAddr>{Base}))
      return joinErrors(std::move(Err), std::move(Result));
    return Result;
  };
  return B;
}

// Places values, descriptors and the argument area, in that order, and
// writes them all in one call. Dense inputs go from the caller's memory.
Error BatchedTransfer::writeInputs(ArrayRef<CheckedInput> Inputs, ExecutorAddr &Av,
                                   LaunchStats &Stats) {
  std::vector<uint64_t> Sizes;
  uint64_t DescBytes = 0;
  for (const CheckedInput &In : Inputs) {
    Sizes.push_back(In.Layout.Bytes);
    DescBytes += MemrefDesc::byteSize(In.Desc.rank());
  }
  Sizes.push_back(DescBytes);
  Sizes.push_back(Inputs.size() * sizeof(uint64_t));
  std::vector<ExecutorAddr> Places;
  if (auto Err = Pool.place(Sizes, Places))
    return Err;

  std::vector<std::vector<char>> Packed(Inputs.size());
  std::vector<char> Descs;
  std::vector<ExecutorAddr> Args;
  std::vector<tpctypes::BufferWrite> Writes;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const CheckedInput &In = Inputs[I];
    const char *Values =
        static_cast<const char *>(In.Desc.aligned()) + In.Desc.offset() * int64_t(In.ElemSize);
    if (!In.Layout.Dense) {
      Packed[I].resize(In.Layout.Bytes);
      packAll(In.Desc, In.ElemSize, In.Layout, Packed[I].data());
      Values = Packed[I].data();
      Stats.HostCopyBytes += In.Layout.Bytes;
    }
    if (In.Layout.Bytes)
      Writes.push_back({Places[I], {Values, size_t(In.Layout.Bytes)}});
    Args.push_back(Places[Inputs.size()] + Descs.size());
    denseDescriptor(In, Places[I], Descs);
    // Serialized into the message by the host, copied into place by the executor.
    Stats.HostCopyBytes += In.Layout.Bytes;
    Stats.ExecutorCopyBytes += In.Layout.Bytes;
  }
  Av = Places.back();
  if (!Descs.empty())
    Writes.push_back({Places[Inputs.size()], Descs});
  if (!Args.empty())
    Writes.push_back({Av, {reinterpret_cast<const char *>(Args.data()), Args.size() * 8}});
  Stats.SlabInUse = Pool.inUse();
  Stats.SlabHighWater = Pool.highWater();
  return Writes.empty() ? Error::success() : EPC.getMemoryAccess().writeBuffers(Writes);
}

// Checks each returned descriptor, reads every output's span in one call,
// checks what came back and packs the values into host buffers.
Error BatchedTransfer::readOutputs(std::vector<char> &Rv, HostOutputs &Outputs,
                                   LaunchStats &Stats) {
  auto Outs = decodeReturned(Rv, Outputs.specs());
  if (!Outs)
    return Outs.takeError();
  std::vector<ExecutorAddrRange> Spans = spansToRead(*Outs);
  MemoryAccess::ReadBuffersResult Read;
  if (!Spans.empty()) {
    auto R = readBuffersChecked(EPC, Spans);
    if (!R)
      return R.takeError();
    Read = std::move(*R);
  }
  if (auto Err = checkRead(Read, Spans))
    return Err;
  size_t Next = 0;
  for (size_t I = 0; I < Outputs.size(); ++I) {
    const ReturnedOutput &O = (*Outs)[I];
    auto Buf = Outputs.allocate(I, O.sizes());
    if (!Buf)
      return Buf.takeError();
    if (!O.Layout.Elements)
      continue;
    if (auto Err = unpackOutput(O, I, Read[Next++], *Buf))
      return Err;
    // Executor serializes; host copies out of the message, out of the
    // decoded vector, and into the host buffer.
    Stats.ExecutorCopyBytes += O.Layout.SpanBytes;
    Stats.HostCopyBytes += 2 * O.Layout.SpanBytes + O.Layout.Bytes;
  }
  return Error::success();
}

// Runs the entry and returns the output descriptors it wrote.
Expected<std::vector<char>> BatchedTransfer::invoke(ExecutorAddr Entry, ExecutorAddr Av,
                                                    const HostOutputs &Outputs, LaunchStats &Stats,
                                                    LaunchTimeline &When) {
  std::vector<uint64_t> Ranks;
  for (size_t I = 0; I < Outputs.size(); ++I)
    Ranks.push_back(Outputs[I].Rank);
  When.Invoke = PhaseClock::now();
  using Timed = std::tuple<std::vector<char>, uint64_t, uint64_t>;
  Expected<Timed> Result((Timed()));
  Error Err = callChecked<SPSBatchedInvokeSig>(EPC, S.Invoke, BatchedInvokeName, Result, Entry, Av,
                                               Ranks, Pool.base(), Pool.reserved());
  When.InvokeNs = nsSince(When.Invoke);
  if (Err)
    return joinErrors(std::move(Err), Result.takeError());
  if (!Result)
    return Result.takeError();
  auto &[Rv, StartNs, KernelNs] = *Result;
  Stats.Phases.KernelNs += KernelNs;
  When.ExecutorStartNs = StartNs;
  return std::move(Rv);
}

Error BatchedTransfer::launch(ExecutorAddr Entry, ArrayRef<CheckedInput> Inputs,
                              HostOutputs &Outputs, LaunchStats &Stats, LaunchTimeline &When) {
  When.Send = PhaseClock::now();
  ExecutorAddr Av;
  if (auto Err = writeInputs(Inputs, Av, Stats))
    return Err;
  Stats.Phases.SendNs += nsSince(When.Send);

  auto Rv = invoke(Entry, Av, Outputs, Stats, When);
  if (!Rv)
    return Rv.takeError();

  When.Receive = PhaseClock::now();
  if (auto Err = readOutputs(*Rv, Outputs, Stats))
    return Err;
  Stats.Phases.ReceiveNs += nsSince(When.Receive);
  return Error::success();
}

Error BatchedTransfer::close() {
  Error Err = callChecked<SPSBatchedReleaseSig>(EPC, S.Release, BatchedReleaseName);
  return joinErrors(std::move(Err), Pool.release());
}

} // namespace catalyst::remote
