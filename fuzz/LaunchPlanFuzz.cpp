//===- LaunchPlanFuzz.cpp - The executor's zero-copy plan decoder ---------===//
//
// Input: the payload's announced size, then the plan bytes (a zero-copy
// plan, or one with residents), as a host would send them. A plan the
// decoder accepts must place exactly the payload, every destination inside
// the (pretend) slab, each input in source order must unpack, chunk by
// chunk, within its own bytes, and resident inputs and kept outputs must
// be in range, in order, resident inputs carrying no bytes; anything else
// must be refused without a crash (the SPS walk stops huge counts before
// the decoder).
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "executor/LaunchPlan.h"

#include <algorithm>
#include <vector>

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;

namespace {

constexpr uint64_t SlabBase = 0x10000, SlabBytes = 1 << 20;

bool inSlab(const char *P, uint64_t Bytes) {
  uint64_t At = reinterpret_cast<uint64_t>(P);
  return At >= SlabBase && Bytes <= SlabBytes && At - SlabBase <= SlabBytes - Bytes;
}

// Unpacks an input's rows as the executor would, into buffers exactly as
// large as its chunk and its bytes (the sanitizers watch their ends).
void unpackAll(const wire::SourceOrder &O, uint64_t Bytes) {
  uint64_t ChunkBytes = uint64_t(O.chunkRows()) * O.rowBytes();
  if (O.bytes() != Bytes || ChunkBytes > wire::SourceOrder::MaxRowBytes)
    __builtin_trap();
  std::vector<char> Src(ChunkBytes), Dst(Bytes);
  for (int64_t Row = 0; Row < O.rows(); Row += O.chunkRows())
    O.unpack(Row, std::min(O.chunkRows(), O.rows() - Row), Src.data(), Dst.data());
}

void checkDecoded(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes) {
  executor::LaunchPlan Out;
  if (auto Err = executor::decodeLaunchPlan(Plan, PayloadBytes, inSlab, Out)) {
    llvm::consumeError(std::move(Err)); // refusing is a fine answer
    return;
  }
  uint64_t Total = 0;
  for (auto &[ElemSize, Sizes, Dest, Bytes] : Out.Inputs) {
    if (Bytes && !inSlab(Dest.toPtr<const char *>(), Bytes))
      __builtin_trap();
    Total += Bytes;
  }
  if (Total != PayloadBytes)
    __builtin_trap();
  for (auto &[Rank, ElemSize] : Out.Outputs)
    if (Rank > wire::MaxRank || ElemSize == 0)
      __builtin_trap();
  if (Out.Orders.size() != Out.Reordered.size())
    __builtin_trap();
  uint64_t Next = 0;
  for (auto &[Index, Id] : Out.ResidentInputs) {
    if (Index < Next || Index >= Out.Inputs.size() || Id == 0 ||
        std::get<3>(Out.Inputs[Index]) != 0)
      __builtin_trap();
    Next = Index + 1;
  }
  Next = 0;
  for (auto &[Index, Id] : Out.KeptOutputs) {
    if (Index < Next || Index >= Out.Outputs.size() || Id == 0)
      __builtin_trap();
    Next = Index + 1;
  }
  for (size_t I = 0; I < Out.Orders.size(); ++I)
    unpackAll(Out.Orders[I], std::get<3>(Out.Inputs[std::get<0>(Out.Reordered[I])]));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  uint64_t PayloadBytes = In.take<uint64_t>();
  llvm::ArrayRef<char> Plan = In.rest();
  checkDecoded(Plan, PayloadBytes);
  return 0;
}
