//===- LaunchPlan.cpp - Decoding a zero-copy launch request ---------------===//

#include "LaunchPlan.h"

#include "wire/MemrefLayout.h"
#include "wire/SpsCheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <vector>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

using namespace wire;

Error badLaunchRequest(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "bad launch request: " + What);
}

namespace {

// Bounds a plan may not exceed, whatever it announces.
constexpr uint64_t MaxMemrefs = 1 << 16;

// Whether In's shape is whole; Expected gets its bytes.
bool wholeShape(const ZeroCopyInput &In, uint64_t &Expected) {
  auto &[ElemSize, Sizes, Dest, Bytes] = In;
  Expected = ElemSize;
  bool Ok = ElemSize > 0 && Sizes.size() <= MaxRank;
  for (int64_t S : Sizes)
    Ok = Ok && S >= 0 && !__builtin_mul_overflow(Expected, uint64_t(S), &Expected);
  return Ok;
}

Error checkInput(size_t I, const ZeroCopyInput &In, SlabCheck InSlabs) {
  auto &[ElemSize, Sizes, Dest, Bytes] = In;
  uint64_t Expected;
  if (!wholeShape(In, Expected) || Expected != Bytes)
    return badLaunchRequest("input " + Twine(I) + " has an inconsistent shape");
  if (Bytes && !InSlabs(Dest.toPtr<char *>(), Bytes))
    return badLaunchRequest("input " + Twine(I) + ": destination " +
                            formatv("{0:x}", Dest.getValue()) + " (" + Twine(Bytes) +
                            " bytes) is outside this session's slabs");
  return Error::success();
}

uint64_t destOf(const ZeroCopyInput &In) {
  return std::get<2>(In).getValue();
}

uint64_t bytesOf(const ZeroCopyInput &In) {
  return std::get<3>(In);
}

// Two inputs that share bytes would each be written over by the other.
// The host places them one after another, so one pass clears the usual
// plan; a plan in any other order is sorted. Each destination lies inside
// a slab already (checkInput), so no end overflows.
Error checkApart(ArrayRef<ZeroCopyInput> Inputs) {
  uint64_t End = 0;
  size_t I = 0;
  for (; I < Inputs.size(); ++I) {
    if (!bytesOf(Inputs[I]))
      continue;
    if (destOf(Inputs[I]) < End)
      break;
    End = destOf(Inputs[I]) + bytesOf(Inputs[I]);
  }
  if (I == Inputs.size())
    return Error::success();
  std::vector<size_t> Order;
  for (size_t K = 0; K < Inputs.size(); ++K)
    if (bytesOf(Inputs[K]))
      Order.push_back(K);
  llvm::sort(Order, [&](size_t A, size_t B) {
    return std::pair(destOf(Inputs[A]), A) < std::pair(destOf(Inputs[B]), B);
  });
  for (size_t K = 1; K < Order.size(); ++K) {
    size_t A = Order[K - 1], B = Order[K];
    if (destOf(Inputs[B]) < destOf(Inputs[A]) + bytesOf(Inputs[A]))
      return badLaunchRequest("inputs " + Twine(std::min(A, B)) + " and " + Twine(std::max(A, B)) +
                              " share bytes at destination " + formatv("{0:x}", destOf(Inputs[B])));
  }
  return Error::success();
}

// The zero-copy plan, or the longer one with residents: a plan walks as
// exactly one of the two.
bool decode(ArrayRef<char> Plan, LaunchPlan &Out) {
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (spsWellFormed<SPSZeroCopyPlan>(Plan.data(), Plan.size()))
    return SPSZeroCopyPlan::deserialize(IB, Out.Entry, Out.Inputs, Out.Outputs, Out.Reordered);
  return spsWellFormed<SPSResidentLaunchPlan>(Plan.data(), Plan.size()) &&
         SPSResidentLaunchPlan::deserialize(IB, Out.Entry, Out.Inputs, Out.Outputs, Out.Reordered,
                                            Out.ResidentInputs, Out.KeptOutputs);
}

// Refs by increasing index below Count, ids nonzero; What names them.
Error checkRefs(ArrayRef<ResidentRef> Refs, size_t Count, const char *What) {
  uint64_t Next = 0;
  for (auto &[Index, Id] : Refs) {
    if (Index < Next || Index >= Count)
      return badLaunchRequest(Twine(What) + " " + Twine(Index) + " is out of order or range");
    if (Id == 0)
      return badLaunchRequest(Twine(What) + " " + Twine(Index) + " names resident id 0");
    Next = Index + 1;
  }
  return Error::success();
}

// Whether input I is a resident (Refs by increasing index).
bool isResident(ArrayRef<ResidentRef> Refs, size_t I, size_t &Cursor) {
  if (Cursor < Refs.size() && std::get<0>(Refs[Cursor]) == I) {
    ++Cursor;
    return true;
  }
  return false;
}

// A resident input travels as its shape alone; no output is kept twice
// under one id.
Error checkResidents(const LaunchPlan &Out) {
  if (auto Err = checkRefs(Out.ResidentInputs, Out.Inputs.size(), "resident input"))
    return Err;
  if (auto Err = checkRefs(Out.KeptOutputs, Out.Outputs.size(), "kept output"))
    return Err;
  for (auto &[Index, Id] : Out.ResidentInputs) {
    uint64_t Expected;
    auto &In = Out.Inputs[Index];
    if (!wholeShape(In, Expected) || std::get<2>(In) || std::get<3>(In))
      return badLaunchRequest("resident input " + Twine(Index) +
                              " has an inconsistent shape, a destination or bytes");
  }
  for (auto &[Index, Id] : Out.Reordered)
    for (auto &[Resident, Rid] : Out.ResidentInputs)
      if (Index == Resident)
        return badLaunchRequest("resident input " + Twine(Index) + " is in source order too");
  std::vector<uint64_t> Ids;
  for (auto &[Index, Id] : Out.KeptOutputs)
    Ids.push_back(Id);
  llvm::sort(Ids);
  if (std::adjacent_find(Ids.begin(), Ids.end()) != Ids.end())
    return badLaunchRequest("two kept outputs under one resident id");
  return Error::success();
}

// Each once, in order, of a payload that carries them, their layouts a
// permutation of the byte count they announced.
Error checkReordered(LaunchPlan &Out, InputSource From) {
  if (!Out.Reordered.empty() && From == InputSource::InPlace)
    return badLaunchRequest("a launch in shared memory has inputs in source order");
  uint64_t Next = 0;
  for (auto &[Index, Strides] : Out.Reordered) {
    if (Index < Next || Index >= Out.Inputs.size())
      return badLaunchRequest("input " + Twine(Index) +
                              " in source order is out of order or range");
    Next = Index + 1;
    auto &[ElemSize, Sizes, Dest, Bytes] = Out.Inputs[Index];
    auto Order = SourceOrder::of(Sizes, Strides, ElemSize, {"input", size_t(Index)});
    if (!Order)
      return badLaunchRequest(toString(Order.takeError()));
    if (Order->bytes() != Bytes)
      return badLaunchRequest("input " + Twine(Index) + " in source order has " +
                              Twine(Order->bytes()) + " bytes, its shape " + Twine(Bytes));
    Out.Orders.push_back(*Order);
  }
  return Error::success();
}

} // namespace

Error decodeLaunchPlan(ArrayRef<char> Plan, uint64_t PayloadBytes, SlabCheck InSlabs,
                       LaunchPlan &Out, InputSource From) {
  // SPS appends to the sequences it decodes into.
  Out.Inputs.clear();
  Out.Outputs.clear();
  Out.Reordered.clear();
  Out.Orders.clear();
  Out.ResidentInputs.clear();
  Out.KeptOutputs.clear();
  if (!decode(Plan, Out))
    return badLaunchRequest("malformed plan");
  if (!Out.Entry || Out.Inputs.size() > MaxMemrefs || Out.Outputs.size() > MaxMemrefs)
    return badLaunchRequest("no entry, or too many memrefs");
  if (auto Err = checkResidents(Out))
    return Err;
  uint64_t Total = 0;
  size_t Resident = 0;
  for (size_t I = 0; I < Out.Inputs.size(); ++I) {
    if (isResident(Out.ResidentInputs, I, Resident))
      continue; // checked above: a shape alone
    if (auto Err = checkInput(I, Out.Inputs[I], InSlabs))
      return Err;
    if (__builtin_add_overflow(Total, std::get<3>(Out.Inputs[I]), &Total))
      return badLaunchRequest("input sizes overflow");
  }
  if (auto Err = checkApart(Out.Inputs))
    return Err;
  if (From == InputSource::InPlace && PayloadBytes)
    return badLaunchRequest("a launch in shared memory came with a payload of " +
                            Twine(PayloadBytes) + " bytes");
  if (From == InputSource::Payload && Total != PayloadBytes)
    return badLaunchRequest("inputs total " + Twine(Total) + " bytes, the payload " +
                            Twine(PayloadBytes));
  for (auto &[Rank, ElemSize] : Out.Outputs)
    if (Rank > MaxRank || ElemSize == 0)
      return badLaunchRequest("an output has rank " + Twine(Rank) + ", element size " +
                              Twine(ElemSize));
  return checkReordered(Out, From);
}

} // namespace catalyst::remote::executor
