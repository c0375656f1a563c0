//===- Framing.cpp - What one message looks like on the wire --------------===//

#include "Framing.h"

#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"
#include "llvm/Support/Endian.h"

#include <cassert>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

void encodeHeader(char *H, uint64_t MsgSize, SimpleRemoteEPCOpcode OpC, uint64_t SeqNo,
                  ExecutorAddr TagAddr) {
  support::endian::write64le(H, MsgSize);
  support::endian::write64le(H + 8, static_cast<uint64_t>(OpC));
  support::endian::write64le(H + 16, SeqNo);
  support::endian::write64le(H + 24, TagAddr.getValue());
}

std::string encodeHangupFrame(StringRef Message) {
  constexpr size_t HeaderSize = FrameHeaderSize;
  shared::detail::SPSSerializableError Info{true, Message.str()};
  using Ser = shared::SPSArgList<shared::SPSError>;
  std::string Frame(HeaderSize + Ser::size(Info), '\0');
  encodeHeader(Frame.data(), Frame.size(), SimpleRemoteEPCOpcode::Hangup, 0, ExecutorAddr());
  shared::SPSOutputBuffer OB(Frame.data() + HeaderSize, Frame.size() - HeaderSize);
  [[maybe_unused]] bool Ok = Ser::serialize(OB, Info);
  assert(Ok && "hangup frame sized by SPS itself");
  return Frame;
}

FrameHeader decodeHeader(const char *H) {
  return {support::endian::read64le(H), support::endian::read64le(H + 8),
          support::endian::read64le(H + 16), support::endian::read64le(H + 24)};
}

} // namespace catalyst::remote::wire
