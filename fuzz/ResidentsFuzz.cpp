//===- ResidentsFuzz.cpp - Both sides' resident message decoders ----------===//
//
// Input: which decoder (the executor's Upload plan, its Fetch and Release
// ids, or the host's ResidentReply), the payload's announced size, then
// the plan bytes, as the other side would send them. What a decoder
// accepts must be whole: an upload's shape takes exactly its payload, ids
// are nonzero and as many as allowed, a successful reply's shape is whole
// or none and its payload is its bytes. Anything else must be refused
// without a crash.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "wire/MemrefLayout.h"
#include "wire/Residents.h"

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;

namespace {

// Shape's bytes, recomputed here; traps on a shape no decoder may accept.
uint64_t bytesOf(const wire::TensorShape &Shape) {
  if (Shape.ElemSize == 0 || Shape.Sizes.size() > wire::MaxRank)
    __builtin_trap();
  uint64_t Bytes = Shape.ElemSize;
  for (int64_t S : Shape.Sizes)
    if (S < 0 || __builtin_mul_overflow(Bytes, uint64_t(S), &Bytes))
      __builtin_trap();
  if (Bytes != Shape.Bytes)
    __builtin_trap();
  return Bytes;
}

void upload(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes) {
  auto P = wire::decodeUploadPlan(Plan, PayloadBytes);
  if (!P)
    return llvm::consumeError(P.takeError()); // refusing is a fine answer
  if (P->Id == 0 || bytesOf(P->Shape) != PayloadBytes)
    __builtin_trap();
}

void ids(llvm::ArrayRef<char> Plan, size_t Most) {
  auto Ids = wire::decodeResidentIds(Plan, Most);
  if (!Ids)
    return llvm::consumeError(Ids.takeError());
  if (Ids->empty() || Ids->size() > Most)
    __builtin_trap();
  for (uint64_t Id : *Ids)
    if (Id == 0)
      __builtin_trap();
}

void reply(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes) {
  auto R = wire::decodeResidentReply(Plan, PayloadBytes);
  if (!R)
    return llvm::consumeError(R.takeError());
  if (!R->Error.empty() || R->Shape.ElemSize == 0) {
    if (PayloadBytes || !R->Shape.Sizes.empty())
      __builtin_trap();
    return;
  }
  uint64_t Bytes = bytesOf(R->Shape);
  if (PayloadBytes && PayloadBytes != Bytes)
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  uint8_t Which = In.take<uint8_t>() % 4;
  uint64_t PayloadBytes = In.take<uint64_t>();
  llvm::ArrayRef<char> Plan = In.rest();
  switch (Which) {
  case 0:
    upload(Plan, PayloadBytes);
    break;
  case 1:
    ids(Plan, 1);
    break;
  case 2:
    ids(Plan, wire::MaxReleasedAtOnce);
    break;
  default:
    reply(Plan, PayloadBytes);
  }
  return 0;
}
