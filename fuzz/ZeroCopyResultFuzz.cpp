//===- ZeroCopyResultFuzz.cpp - The host's zero-copy result decoder -------===//
//
// Input: the launch's outputs (FuzzInput.h), the payload's announced size,
// then the result plan bytes, as an executor would send them. Accepted, the destinations must cover exactly the
// payload inside the output buffers (written here, so ASan sees any byte
// outside); refused, the outputs must be zeroed again.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "transfer/ZeroCopyResult.h"

#include <cstdlib>

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;

namespace {

void decode(FuzzOutputs &Outs, uint64_t PayloadBytes, llvm::ArrayRef<char> Plan) {
  {
    HostOutputs Outputs(Outs.Args, {std::malloc, std::free});
    ZeroCopyResult R;
    std::vector<iovec> Dst;
    if (auto Err = decodeZeroCopyResult(Plan, PayloadBytes, Outputs, R, Dst)) {
      llvm::consumeError(std::move(Err)); // refusing is a fine answer
    } else {
      uint64_t Total = 0;
      for (const iovec &V : Dst) {
        std::memset(V.iov_base, 0x5a, V.iov_len);
        Total += V.iov_len;
      }
      if (Total != (R.RemoteError.empty() ? PayloadBytes : 0))
        __builtin_trap();
    }
  }
  // Never committed: the outputs are zeroed and their buffers released.
  for (const auto &D : Outs.Descs)
    for (char C : D)
      if (C)
        __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  FuzzOutputs Outs = takeOutputs(In);
  uint64_t PayloadBytes = In.take<uint32_t>() % (MaxPackedBytes + 1);
  llvm::ArrayRef<char> Plan = In.rest();
  decode(Outs, PayloadBytes, Plan);
  return 0;
}
