//===- SharedResultFuzz.cpp - The host's shared-memory result decoder -----===//
//
// Input: the launch's outputs (FuzzInput.h), the executor address of a
// 64 KiB window this host "mapped" (a buffer here), then the SharedResult
// plan bytes, as an executor would send them. Accepted, every copy must
// read inside the window and write inside an output buffer (done here, so
// ASan sees any byte outside); refused, the outputs must be zeroed again.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "transfer/SharedResult.h"

#include <cstdlib>

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;
using llvm::orc::ExecutorAddr;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  FuzzOutputs Outs = takeOutputs(In);
  uint64_t Base = In.take<uint64_t>();
  static std::vector<char> Window(64 << 10, 0x33);
  auto Resolve = [Base](ExecutorAddr A, uint64_t Bytes) -> const char * {
    uint64_t Offset = A.getValue() - Base;
    bool Inside =
        A.getValue() >= Base && Offset <= Window.size() && Bytes <= Window.size() - Offset;
    return Inside ? Window.data() + Offset : nullptr;
  };
  llvm::ArrayRef<char> Plan = In.rest();
  {
    HostOutputs Outputs(Outs.Args, {std::malloc, std::free});
    ZeroCopyResult R;
    std::vector<SharedCopy> Copies;
    if (auto Err = decodeSharedResult(Plan, Outputs, R, Resolve, Copies))
      llvm::consumeError(std::move(Err)); // refusing is a fine answer
    for (const SharedCopy &C : Copies)
      std::memcpy(C.To, C.From, C.Bytes);
  }
  // Never committed: the outputs are zeroed and their buffers released.
  for (const auto &D : Outs.Descs)
    for (char C : D)
      if (C)
        __builtin_trap();
  return 0;
}
