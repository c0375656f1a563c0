//===- CheckedCall.h - Calling the executor, its reply checked --*- C++ -*-===//
//
// ExecutorProcessControl::callSPSWrapper hands the executor's reply bytes
// straight to LLVM's SPS decoder, which reserves whatever counts they
// announce: a reply claiming 2^60 bytes of error message ends the host
// process. callChecked makes the same call and walks the reply first
// (wire/SpsCheck.h); a reply that does not walk becomes the error
// "malformed reply from the executor to SERVICE". bootstrapValue reads
// what the executor announced in its bootstrap map with the same care.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TRANSFER_CHECKEDCALL_H
#define CATALYST_REMOTE_TRANSFER_CHECKEDCALL_H

#include "wire/SpsCheck.h"

#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"
#include "llvm/ExecutionEngine/Orc/MemoryAccess.h"

#include <optional>

namespace catalyst::remote {

// A reply that does not walk as SPSSig's result, as an out-of-band error;
// else Reply itself.
template <typename SPSSig>
llvm::orc::shared::WrapperFunctionBuffer
checkedReply(llvm::orc::shared::WrapperFunctionBuffer Reply, const char *Service) {
  using Result = typename wire::SpsSignature<SPSSig>::Result;
  if (Reply.getOutOfBandError() || wire::spsWellFormed<Result>(Reply.data(), Reply.size()))
    return Reply;
  return llvm::orc::shared::WrapperFunctionBuffer::createOutOfBandError(
      (llvm::Twine("malformed reply from the executor to ") + Service).str());
}

// EPC.callSPSWrapper<SPSSig>(Fn, Args...) with the reply checked; Service
// names Fn in the error.
template <typename SPSSig, typename... ArgTs>
llvm::Error callChecked(llvm::orc::ExecutorProcessControl &EPC, llvm::orc::ExecutorAddr Fn,
                        const char *Service, ArgTs &&...Args) {
  return llvm::orc::shared::WrapperFunction<SPSSig>::call(
      [&](const char *Data, size_t Size) {
        return checkedReply<SPSSig>(EPC.callWrapper(Fn, llvm::ArrayRef<char>(Data, Size)), Service);
      },
      std::forward<ArgTs>(Args)...);
}

// The value under Key in the executor's bootstrap map, when there is one
// that decodes as Tag; walked first, since the executor chose its bytes.
template <typename Tag, typename T>
std::optional<T> bootstrapValue(const llvm::orc::ExecutorProcessControl &EPC, llvm::StringRef Key) {
  auto It = EPC.getBootstrapMap().find(Key);
  if (It == EPC.getBootstrapMap().end())
    return std::nullopt;
  const std::vector<char> &Bytes = It->second;
  using Value = llvm::orc::shared::SPSArgList<Tag>;
  if (!wire::spsWellFormed<Value>(Bytes.data(), Bytes.size()))
    return std::nullopt;
  T Decoded;
  llvm::orc::shared::SPSInputBuffer IB(Bytes.data(), Bytes.size());
  if (!Value::deserialize(IB, Decoded))
    return std::nullopt;
  return Decoded;
}

// MemoryAccess::readBuffers through ORC's own service, its reply checked.
llvm::Expected<llvm::orc::MemoryAccess::ReadBuffersResult>
readBuffersChecked(llvm::orc::ExecutorProcessControl &EPC,
                   llvm::ArrayRef<llvm::orc::ExecutorAddrRange> Spans);

} // namespace catalyst::remote

#endif
