//===- ZeroCopyService.cpp - Launches in one out-of-line round trip -------===//

#include "ZeroCopyService.h"

#include "../engine/wire/MemrefLayout.h"
#include "Slabs.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <cstdlib>
#include <sys/uio.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

using namespace wire;

namespace {

// Bounds a plan may not exceed, whatever it announces.
constexpr uint64_t MaxMemrefs = 1 << 16;

uint64_t nsBetween(std::chrono::steady_clock::time_point A,
                   std::chrono::steady_clock::time_point B) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(B - A).count();
}

Error badPlan(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "bad launch request: " + What);
}

Error checkInput(size_t I, const ZeroCopyInput &In) {
  auto &[ElemSize, Sizes, Dest, Bytes] = In;
  uint64_t Expected = ElemSize;
  bool Ok = ElemSize > 0 && Sizes.size() <= MaxRank;
  for (int64_t S : Sizes)
    Ok = Ok && S >= 0 && !__builtin_mul_overflow(Expected, uint64_t(S), &Expected);
  if (!Ok || Expected != Bytes)
    return badPlan("input " + Twine(I) + " has an inconsistent shape");
  if (Bytes && !Slabs::get().contains(Dest.toPtr<char *>(), Bytes))
    return badPlan("input " + Twine(I) + ": destination " + formatv("{0:x}", Dest.getValue()) +
                   " (" + Twine(Bytes) + " bytes) is outside this session's slabs");
  return Error::success();
}

Expected<std::vector<Returned>> inspect(ArrayRef<LaunchOutputSpec> Specs, char *Rv) {
  std::vector<Returned> Outs;
  for (size_t I = 0; I < Specs.size(); ++I) {
    auto [Rank, ElemSize] = Specs[I];
    MemrefDesc D(Rv, Rank);
    Rv += MemrefDesc::byteSize(Rank);
    auto L = layoutOf(D, ElemSize, {"kernel output", I});
    if (!L)
      return L.takeError();
    Outs.push_back({D, size_t(ElemSize), *L});
  }
  return Outs;
}

// Frees what the kernel handed back, once: never slab memory (inputs) and
// never a constant global.
void freeReturned(ArrayRef<Returned> Outs) {
  SmallPtrSet<void *, 8> Freed;
  for (const Returned &O : Outs) {
    void *P = O.Desc.allocated();
    if (!P || reinterpret_cast<uintptr_t>(P) == ConstantGlobalMarker ||
        Slabs::get().contains(static_cast<char *>(P), 1))
      continue;
    if (Freed.insert(P).second)
      std::free(P);
  }
}

std::vector<char> encodeResult(const std::string &Error, ArrayRef<ZeroCopyOutput> Outs,
                               uint64_t CopyInNs, uint64_t KernelNs, uint64_t CopyOutNs,
                               uint64_t CopyBytes) {
  std::vector<char> Plan(
      SPSZeroCopyResult::size(Error, Outs, CopyInNs, KernelNs, CopyOutNs, CopyBytes));
  sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
  SPSZeroCopyResult::serialize(OB, Error, Outs, CopyInNs, KernelNs, CopyOutNs, CopyBytes);
  return Plan;
}

} // namespace

ZeroCopyService &ZeroCopyService::get() {
  static ZeroCopyService S;
  return S;
}

void ZeroCopyService::attach(SocketTransport &T) {
  Transport = &T;
  T.setPayloadHandler(this);
}

Error ZeroCopyService::decode(ArrayRef<char> Plan, uint64_t PayloadBytes) {
  Launch &L = Current;
  // SPS appends to the sequences it decodes into.
  L.Inputs.clear();
  L.Outputs.clear();
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (!SPSZeroCopyPlan::deserialize(IB, L.Entry, L.Inputs, L.Outputs))
    return badPlan("malformed plan");
  if (!L.Entry || L.Inputs.size() > MaxMemrefs || L.Outputs.size() > MaxMemrefs)
    return badPlan("no entry, or too many memrefs");
  uint64_t Total = 0;
  for (size_t I = 0; I < L.Inputs.size(); ++I) {
    if (auto Err = checkInput(I, L.Inputs[I]))
      return Err;
    if (__builtin_add_overflow(Total, std::get<3>(L.Inputs[I]), &Total))
      return badPlan("input sizes overflow");
  }
  if (Total != PayloadBytes)
    return badPlan("inputs total " + Twine(Total) + " bytes, the payload " + Twine(PayloadBytes));
  for (auto &[Rank, ElemSize] : L.Outputs)
    if (Rank > MaxRank || ElemSize == 0)
      return badPlan("an output has rank " + Twine(Rank) + ", element size " + Twine(ElemSize));
  return Error::success();
}

// Messages are read one at a time on the reader thread, so place() and
// finish() of one launch follow each other with no other launch between.
Expected<std::vector<iovec>> ZeroCopyService::place(PayloadOpcode OpC, uint64_t SeqNo,
                                                    ArrayRef<char> Plan, uint64_t PayloadBytes) {
  if (OpC != PayloadOpcode::Launch || !Enabled)
    return badPlan("zero-copy launches were not enabled by the host");
  if (auto Err = decode(Plan, PayloadBytes))
    return Err;
  std::vector<iovec> Dst;
  for (auto &[ElemSize, Sizes, Dest, Bytes] : Current.Inputs)
    if (Bytes)
      Dst.push_back({Dest.toPtr<void *>(), size_t(Bytes)});
  Current.Arrived = Clock::now();
  return Dst;
}

void ZeroCopyService::finish(PayloadOpcode, uint64_t SeqNo, shared::WrapperFunctionBuffer,
                             Error Err) {
  if (Err)
    return replyError(SeqNo, std::move(Err));
  run(SeqNo);
}

void ZeroCopyService::replyError(uint64_t SeqNo, Error Err) {
  auto Plan = encodeResult(toString(std::move(Err)), {}, 0, 0, 0, 0);
  consumeError(Transport->sendWithPayload(PayloadOpcode::LaunchResult, SeqNo, Plan, {}));
}

// Descriptors of the inputs where they landed, and the argument area.
void ZeroCopyService::buildArguments() {
  Scratch &S = Work;
  S.Descs.clear();
  for (auto &[ElemSize, Sizes, Dest, Bytes] : Current.Inputs)
    S.Descs.resize(S.Descs.size() + MemrefDesc::byteSize(Sizes.size()));
  S.Args.clear();
  char *Cursor = S.Descs.data();
  for (auto &[ElemSize, Sizes, Dest, Bytes] : Current.Inputs) {
    MemrefDesc D(Cursor, Sizes.size());
    for (size_t K = 0; K < Sizes.size(); ++K)
      D.setSize(K, Sizes[K]);
    D.rewriteDense(Dest.toPtr<void *>());
    S.Args.push_back(Cursor);
    Cursor += MemrefDesc::byteSize(Sizes.size());
  }
  size_t RvBytes = 0;
  for (auto &[Rank, ElemSize] : Current.Outputs)
    RvBytes += MemrefDesc::byteSize(Rank);
  S.Rv.assign(RvBytes, 0);
}

// What goes back for each output: its shape, and its values straight from
// the kernel's buffer when dense, packed on the fly when not. Returns the
// bytes packed.
uint64_t ZeroCopyService::collectOutputs(ArrayRef<Returned> Outs) {
  Scratch &S = Work;
  S.Shapes.clear();
  S.Parts.clear();
  S.Packers.clear();
  S.Packers.reserve(Outs.size());
  uint64_t Packed = 0;
  for (const Returned &O : Outs) {
    std::vector<int64_t> Sizes(O.Desc.rank());
    for (size_t K = 0; K < Sizes.size(); ++K)
      Sizes[K] = O.Desc.size(K);
    S.Shapes.emplace_back(std::move(Sizes), O.Layout.Bytes);
    if (O.Layout.Dense) {
      S.Parts.push_back(
          {static_cast<const char *>(O.Desc.aligned()) + O.Desc.offset() * int64_t(O.ElemSize),
           O.Layout.Bytes, nullptr});
      continue;
    }
    S.Packers.emplace_back(O.Desc, O.ElemSize, O.Layout);
    S.Parts.push_back({nullptr, O.Layout.Bytes, &S.Packers.back()});
    Packed += O.Layout.Bytes;
  }
  return Packed;
}

void ZeroCopyService::run(uint64_t SeqNo) {
  buildArguments();
  auto Start = Clock::now();
  Current.Entry.toPtr<void (*)(void *, void *)>()(Work.Rv.data(), Work.Args.data());
  auto Ran = Clock::now();

  auto Outs = inspect(Current.Outputs, Work.Rv.data());
  if (!Outs)
    return replyError(SeqNo, Outs.takeError());
  uint64_t Packed = collectOutputs(*Outs);
  auto Plan = encodeResult("", Work.Shapes, nsBetween(Current.Arrived, Start),
                           nsBetween(Start, Ran), nsBetween(Ran, Clock::now()), Packed);
  consumeError(Transport->sendWithPayload(PayloadOpcode::LaunchResult, SeqNo, Plan, Work.Parts));
  freeReturned(*Outs);
}

} // namespace catalyst::remote::executor
