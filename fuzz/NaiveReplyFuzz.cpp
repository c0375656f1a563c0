//===- NaiveReplyFuzz.cpp - The host's naive launch replies ---------------===//
//
// Input: the launch's outputs (FuzzInput.h), the descriptor area's length
// and bytes (as read back from the executor's result area), then for each
// output with elements the buffers its read returns (OutputRepliesFuzz.h):
// naive reads one span per call.
//
//===----------------------------------------------------------------------===//

#include "OutputRepliesFuzz.h"

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  FuzzOutputs Outs = takeOutputs(In);
  llvm::ArrayRef<char> Rv = In.bytes(In.take<uint16_t>());
  auto Returned = decodeReturned(Rv, Outs.Args);
  if (!Returned) {
    llvm::consumeError(Returned.takeError()); // refusing is a fine answer
    return 0;
  }
  for (size_t I = 0; I < Returned->size(); ++I) {
    const ReturnedOutput &O = (*Returned)[I];
    if (!O.Layout.Elements)
      continue;
    auto Read = takeRead(In, O.Span);
    if (auto Err = checkRead(Read, O.Span)) {
      llvm::consumeError(std::move(Err)); // refusing is a fine answer
      return 0;
    }
    unpackExactly(O, I, Read.front());
  }
  return 0;
}
