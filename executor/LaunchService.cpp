//===- LaunchService.cpp - One launch in one call -------------------------===//

#include "LaunchService.h"

#include "../engine/wire/MemrefLayout.h"
#include "../engine/wire/Protocol.h"
#include "../engine/wire/WireCodec.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <cstdlib>
#include <tuple>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

namespace {

using namespace wire;

// Bounds a request may not exceed, whatever it announces.
constexpr uint64_t MaxMemrefs = 1 << 16;
// Kernels may use aligned vector loads on their inputs.
constexpr size_t InputAlign = 64;

struct InputSpec {
  uint64_t ElemSize = 0;
  std::vector<int64_t> Sizes;
  const char *Values = nullptr;
  uint64_t Bytes = 0;
};

struct Request {
  ExecutorAddr Entry;
  std::vector<InputSpec> Inputs;
  std::vector<std::tuple<uint64_t, uint64_t>> Outputs; // rank, element size
};

Error badRequest(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "bad launch request: " + What);
}

// Bytes of a dense array of Sizes, or false on overflow or a negative size.
bool denseBytes(ArrayRef<int64_t> Sizes, uint64_t ElemSize, uint64_t &Bytes) {
  Bytes = ElemSize;
  for (int64_t S : Sizes)
    if (S < 0 || __builtin_mul_overflow(Bytes, uint64_t(S), &Bytes))
      return false;
  return true;
}

Error decodeInput(WireReader &R, size_t I, InputSpec &In) {
  if (!R.get<uint64_t, sps::SPSSequence<int64_t>, uint64_t>(In.ElemSize, In.Sizes, In.Bytes))
    return badRequest("input " + Twine(I) + " is truncated");
  uint64_t Expected;
  if (In.ElemSize == 0 || In.Sizes.size() > MaxRank ||
      !denseBytes(In.Sizes, In.ElemSize, Expected) || Expected != In.Bytes)
    return badRequest("input " + Twine(I) + " has an inconsistent shape");
  if (!(In.Values = R.take(In.Bytes)))
    return badRequest("input " + Twine(I) + " is truncated");
  return Error::success();
}

Expected<Request> decode(const char *Data, size_t Size) {
  WireReader R(Data, Size);
  Request Req;
  uint64_t N = 0;
  if (!R.get<sps::SPSExecutorAddr, uint64_t>(Req.Entry, N) || !Req.Entry || N > MaxMemrefs)
    return badRequest("no entry or too many inputs");
  Req.Inputs.resize(N);
  for (size_t I = 0; I < N; ++I)
    if (auto Err = decodeInput(R, I, Req.Inputs[I]))
      return Err;
  if (!R.get<sps::SPSSequence<SPSLaunchOutputSpec>>(Req.Outputs) || Req.Outputs.size() > MaxMemrefs)
    return badRequest("bad output list");
  for (auto &[Rank, ElemSize] : Req.Outputs)
    if (Rank > MaxRank || ElemSize == 0)
      return badRequest("an output has rank " + Twine(Rank) + ", element size " + Twine(ElemSize));
  return Req;
}

// Executor-side copies of the inputs, one aligned block, and the argument
// area pointing at their descriptors.
class InputArena {
public:
  ~InputArena() { std::free(Block); }

  Error build(ArrayRef<InputSpec> Inputs) {
    std::vector<uint64_t> Offsets;
    for (const InputSpec &In : Inputs) {
      Offsets.push_back(Total);
      Total += (In.Bytes + InputAlign - 1) / InputAlign * InputAlign;
    }
    Block = static_cast<char *>(std::aligned_alloc(InputAlign, Total ? Total : InputAlign));
    if (!Block)
      return createStringError(std::errc::not_enough_memory,
                               "cannot allocate %llu bytes for the inputs",
                               (unsigned long long)Total);
    size_t DescBytes = 0;
    for (const InputSpec &In : Inputs)
      DescBytes += MemrefDesc::byteSize(In.Sizes.size());
    Descs.assign(DescBytes, 0);
    char *Cursor = Descs.data();
    for (size_t I = 0; I < Inputs.size(); ++I) {
      std::memcpy(Block + Offsets[I], Inputs[I].Values, Inputs[I].Bytes);
      MemrefDesc D(Cursor, Inputs[I].Sizes.size());
      for (size_t K = 0; K < D.rank(); ++K)
        D.setSize(K, Inputs[I].Sizes[K]);
      D.rewriteDense(Block + Offsets[I]);
      Args.push_back(Cursor);
      Cursor += MemrefDesc::byteSize(D.rank());
    }
    return Error::success();
  }

  void *args() { return Args.data(); }
  bool contains(const void *P) const {
    auto *C = static_cast<const char *>(P);
    return C >= Block && C < Block + Total;
  }

private:
  char *Block = nullptr;
  uint64_t Total = 0;
  std::vector<char> Descs;
  std::vector<void *> Args;
};

struct Returned {
  MemrefDesc Desc;
  size_t ElemSize;
  MemrefLayout Layout;
};

std::vector<int64_t> sizesOf(const MemrefDesc &D) {
  std::vector<int64_t> S(D.rank());
  for (size_t I = 0; I < D.rank(); ++I)
    S[I] = D.size(I);
  return S;
}

Expected<std::vector<Returned>> inspect(const Request &Req, char *Rv) {
  std::vector<Returned> Outs;
  for (size_t I = 0; I < Req.Outputs.size(); ++I) {
    auto [Rank, ElemSize] = Req.Outputs[I];
    MemrefDesc D(Rv, Rank);
    Rv += MemrefDesc::byteSize(Rank);
    auto L = layoutOf(D, ElemSize, "output " + std::to_string(I) + " returned by the kernel");
    if (!L)
      return L.takeError();
    Outs.push_back({D, size_t(ElemSize), *L});
  }
  return Outs;
}

shared::WrapperFunctionBuffer encodeOutputs(ArrayRef<Returned> Outs) {
  size_t Size = sps::SPSArgList<bool, uint64_t>::size(true, uint64_t(Outs.size()));
  for (const Returned &O : Outs)
    Size += sps::SPSArgList<sps::SPSSequence<int64_t>, uint64_t>::size(sizesOf(O.Desc),
                                                                       O.Layout.Bytes) +
            O.Layout.Bytes;
  auto Reply = shared::WrapperFunctionBuffer::allocate(Size);
  WireWriter W(Reply.data(), Reply.size());
  W.put<bool, uint64_t>(true, uint64_t(Outs.size()));
  for (const Returned &O : Outs) {
    W.put<sps::SPSSequence<int64_t>, uint64_t>(sizesOf(O.Desc), O.Layout.Bytes);
    packAll(O.Desc, O.ElemSize, O.Layout, W.take(O.Layout.Bytes));
  }
  return Reply;
}

shared::WrapperFunctionBuffer encodeError(Error Err) {
  std::string Msg = toString(std::move(Err));
  auto Reply = shared::WrapperFunctionBuffer::allocate(
      sps::SPSArgList<bool, sps::SPSString>::size(false, Msg));
  WireWriter W(Reply.data(), Reply.size());
  W.put<bool, sps::SPSString>(false, Msg);
  return Reply;
}

// Frees each buffer the kernel handed back, once: never a constant global
// and never one of the inputs.
void freeReturned(ArrayRef<Returned> Outs, const InputArena &Arena) {
  SmallPtrSet<void *, 8> Freed;
  for (const Returned &O : Outs) {
    void *P = O.Desc.allocated();
    if (!P || reinterpret_cast<uintptr_t>(P) == ConstantGlobalMarker || Arena.contains(P))
      continue;
    if (Freed.insert(P).second)
      std::free(P);
  }
}

shared::WrapperFunctionBuffer launch(const char *Data, size_t Size) {
  auto Req = decode(Data, Size);
  if (!Req)
    return encodeError(Req.takeError());
  InputArena Arena;
  if (auto Err = Arena.build(Req->Inputs))
    return encodeError(std::move(Err));
  size_t RvBytes = 0;
  for (auto &[Rank, ElemSize] : Req->Outputs)
    RvBytes += MemrefDesc::byteSize(Rank);
  std::vector<char> Rv(RvBytes, 0);
  Req->Entry.toPtr<void (*)(void *, void *)>()(Rv.data(), Arena.args());
  auto Outs = inspect(*Req, Rv.data());
  if (!Outs)
    return encodeError(Outs.takeError());
  auto Reply = encodeOutputs(*Outs);
  freeReturned(*Outs, Arena);
  return Reply;
}

} // namespace

shared::CWrapperFunctionBuffer launchWrapper(const char *Data, size_t Size) {
  return launch(Data, Size).release();
}

} // namespace catalyst::remote::executor
