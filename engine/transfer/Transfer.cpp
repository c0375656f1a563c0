#include "Transfer.h"

#include "ResidentRequests.h"

namespace catalyst::remote {
Transfer::~Transfer() = default;
ResidentRequests::~ResidentRequests() = default;

uint64_t Transfer::largestRequest(llvm::ArrayRef<CheckedInput> Inputs) const {
  return messageCarrying(Inputs);
}

// Every input in one message, with room for descriptors and framing.
uint64_t Transfer::messageCarrying(llvm::ArrayRef<CheckedInput> Inputs) {
  uint64_t Bytes = framingFor(Inputs);
  for (const CheckedInput &In : Inputs)
    Bytes += In.Layout.Bytes;
  return Bytes;
}

uint64_t Transfer::framingFor(llvm::ArrayRef<CheckedInput> Inputs) {
  uint64_t Bytes = 4096;
  for (const CheckedInput &In : Inputs)
    Bytes += wire::MemrefDesc::byteSize(In.Desc.rank()) + 64;
  return Bytes;
}
} // namespace catalyst::remote
