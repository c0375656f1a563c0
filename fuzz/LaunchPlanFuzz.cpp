//===- LaunchPlanFuzz.cpp - The executor's zero-copy plan decoder ---------===//
//
// Input: the payload's announced size, then the plan bytes, as a host would
// send them. A plan the decoder accepts must place exactly the payload, every
// destination inside the (pretend) slab; anything else must be refused
// without a crash (the SPS walk stops huge counts before the decoder).
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "executor/LaunchPlan.h"

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;

namespace {

constexpr uint64_t SlabBase = 0x10000, SlabBytes = 1 << 20;

bool inSlab(const char *P, uint64_t Bytes) {
  uint64_t At = reinterpret_cast<uint64_t>(P);
  return At >= SlabBase && Bytes <= SlabBytes && At - SlabBase <= SlabBytes - Bytes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  uint64_t PayloadBytes = In.take<uint64_t>();
  llvm::ArrayRef<char> Plan = In.rest();
  executor::LaunchPlan Out;
  if (auto Err = executor::decodeLaunchPlan(Plan, PayloadBytes, inSlab, Out)) {
    llvm::consumeError(std::move(Err)); // refusing is a fine answer
    return 0;
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
  return 0;
}
