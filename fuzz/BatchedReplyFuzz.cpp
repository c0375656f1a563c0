//===- BatchedReplyFuzz.cpp - The host's batched launch replies -----------===//
//
// Input: the launch's outputs (FuzzInput.h), the invoke reply's length and
// bytes (SPS, as the executor's batched service answers), then the buffers
// the span read returns (OutputRepliesFuzz.h).
//
//===----------------------------------------------------------------------===//

#include "OutputRepliesFuzz.h"
#include "wire/Protocol.h"
#include "wire/SpsCheck.h"

using namespace catalyst::remote;
using namespace catalyst::remote::fuzz;
namespace sps = llvm::orc::shared;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzInput In(Data, Size);
  FuzzOutputs Outs = takeOutputs(In);
  llvm::ArrayRef<char> Reply = In.bytes(In.take<uint16_t>());
  using Result = wire::SpsSignature<wire::SPSBatchedInvokeSig>::Result;
  if (!wire::spsWellFormed<Result>(Reply.data(), Reply.size()))
    return 0;
  sps::detail::SPSSerializableExpected<std::tuple<std::vector<char>, uint64_t, uint64_t>> Invoked;
  sps::SPSInputBuffer IB(Reply.data(), Reply.size());
  if (!Result::deserialize(IB, Invoked))
    __builtin_trap(); // it walked, so it decodes
  if (!Invoked.HasValue)
    return 0;
  auto Returned = decodeReturned(std::get<0>(Invoked.Value), Outs.Args);
  if (!Returned) {
    llvm::consumeError(Returned.takeError()); // refusing is a fine answer
    return 0;
  }
  auto Spans = spansToRead(*Returned);
  auto Read = takeRead(In, Spans);
  if (auto Err = checkRead(Read, Spans)) {
    llvm::consumeError(std::move(Err)); // refusing is a fine answer
    return 0;
  }
  size_t Next = 0;
  for (size_t I = 0; I < Returned->size(); ++I)
    if ((*Returned)[I].Layout.Elements)
      unpackExactly((*Returned)[I], I, Read[Next++]);
  return 0;
}
