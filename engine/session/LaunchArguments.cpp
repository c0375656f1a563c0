//===- LaunchArguments.cpp - A launch's arguments, checked ----------------===//

#include "LaunchArguments.h"

#include "catalyst/remote/Failure.h"
#include "wire/MemrefLayout.h"
#include "wire/ReadableMemory.h"

using namespace llvm;

namespace catalyst::remote {

namespace {

// Err, from a check of the caller's inputs, as the caller's fault: the
// wire code's checks serve the executor's replies too, which are not.
Error badInput(Error Err) {
  return makeFailure(FailureKind::BadArgument, toString(std::move(Err)));
}

// Lent buffers that overlapped would have one output overwrite another.
Error checkInto(ArrayRef<MutableArrayRef<char>> Into, size_t NumOutputs) {
  if (Into.empty())
    return Error::success();
  if (Into.size() != NumOutputs)
    return makeFailure(FailureKind::BadArgument, Twine(Into.size()) +
                                                     " buffers to receive outputs into, for " +
                                                     Twine(NumOutputs) + " outputs");
  for (size_t I = 0; I < Into.size(); ++I)
    for (size_t J = 0; J < I; ++J)
      if (!Into[I].empty() && !Into[J].empty() && Into[I].data() < Into[J].end() &&
          Into[J].data() < Into[I].end())
        return makeFailure(FailureKind::BadArgument,
                           "outputs " + Twine(J) + " and " + Twine(I) +
                               ": the buffers to receive them into overlap");
  return Error::success();
}

// Two outputs kept into one handle would have the second overwrite the
// first's, which would then be lost.
Error checkKeep(ArrayRef<Resident *> Keep, size_t NumOutputs) {
  if (Keep.empty())
    return Error::success();
  if (Keep.size() != NumOutputs)
    return makeFailure(FailureKind::BadArgument, Twine(Keep.size()) +
                                                     " handles to keep outputs in, for " +
                                                     Twine(NumOutputs) + " outputs");
  for (size_t I = 0; I < Keep.size(); ++I)
    for (size_t J = 0; J < I; ++J)
      if (Keep[I] && Keep[I] == Keep[J])
        return makeFailure(FailureKind::BadArgument, "outputs " + Twine(J) + " and " + Twine(I) +
                                                         " are kept into one handle");
  return Error::success();
}

} // namespace

Expected<std::vector<CheckedInput>> checkInputs(ArrayRef<MemrefArg> Inputs,
                                                ResidentTable *Residents, const char *Role) {
  std::vector<CheckedInput> Plans;
  Plans.reserve(Inputs.size());
  wire::ReadableSet Readable;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    if (Inputs[I].Kept) {
      if (!Residents)
        return makeFailure(FailureKind::BadArgument,
                           Twine(Role) + " " + Twine(I) +
                               " is a resident, which this call cannot take");
      auto In = Residents->input(*Inputs[I].Kept, Inputs[I], I);
      if (!In)
        return In.takeError();
      Plans.push_back(*In);
      continue;
    }
    if (!Inputs[I].Desc)
      return makeFailure(FailureKind::BadArgument,
                         Twine(Role) + " " + Twine(I) + ": null descriptor");
    wire::MemrefDesc D(Inputs[I].Desc, Inputs[I].Rank);
    auto L = wire::layoutOf(D, Inputs[I].ElemSize, {Role, I});
    if (!L)
      return badInput(L.takeError());
    Readable.add(D, Inputs[I].ElemSize, *L, {Role, I});
    Plans.push_back({D, Inputs[I].ElemSize, *L});
  }
  // Before any strategy copies or sends from them: either would stop part
  // way (a crash, or a message cut short that ends the connection).
  if (auto Err = Readable.check())
    return badInput(std::move(Err));
  return Plans;
}

Error checkOutputs(const LaunchCall &Call) {
  ArrayRef<MemrefArg> Outputs = Call.Outputs;
  for (size_t I = 0; I < Outputs.size(); ++I) {
    if (!Outputs[I].Desc)
      return makeFailure(FailureKind::BadArgument, "output " + Twine(I) + ": null descriptor");
    if (Outputs[I].ElemSize == 0 || Outputs[I].Rank > wire::MaxRank)
      return makeFailure(FailureKind::BadArgument, "output " + Twine(I) + ": element size " +
                                                       Twine(Outputs[I].ElemSize) + ", rank " +
                                                       Twine(Outputs[I].Rank) + " is not a memref");
  }
  if (auto Err = checkKeep(Call.Keep, Outputs.size()))
    return Err;
  return checkInto(Call.Into, Outputs.size());
}

SmallVector<bool, 8> lentOutputs(ArrayRef<MutableArrayRef<char>> Into, size_t Count) {
  SmallVector<bool, 8> Lent(Count, false);
  for (size_t I = 0; I < Into.size() && I < Count; ++I)
    Lent[I] = Into[I].data() != nullptr;
  return Lent;
}

} // namespace catalyst::remote
