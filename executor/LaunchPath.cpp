//===- LaunchPath.cpp - How a zero-copy launch's bytes come and go --------===//

#include "LaunchPath.h"

using namespace llvm;

namespace catalyst::remote::executor {

using namespace wire;

uint64_t outputBytes(ArrayRef<PayloadPart> Parts) {
  uint64_t Bytes = 0;
  for (const PayloadPart &P : Parts)
    Bytes += P.Bytes;
  return Bytes;
}

// A result the transport would refuse as too large is an error reply that
// says so, with the sizes, rather than a failed send.
Error SocketLaunchPath::sendResult(SocketTransport &T, uint64_t SeqNo, ArrayRef<PayloadPart> Parts,
                                   uint64_t Packed, PlanFor Plan) {
  std::vector<char> Result = Plan(Packed);
  uint64_t Payload = outputBytes(Parts);
  uint64_t Message = SocketTransport::HeaderSize + Result.size() + Payload;
  uint64_t Limit = T.maxMessageSize();
  if (Message > Limit)
    return createStringError(inconvertibleErrorCode(),
                             "the launch result does not fit a message: its outputs take %llu "
                             "bytes, a message of %llu bytes, above this executor's limit of "
                             "%llu bytes (--max-message)",
                             (unsigned long long)Payload, (unsigned long long)Message,
                             (unsigned long long)Limit);
  return T.sendWithPayload(PayloadOpcode::LaunchResult, SeqNo, Result, Parts);
}

Error SharedLaunchPath::sendResult(SocketTransport &, uint64_t SeqNo, ArrayRef<PayloadPart> Parts,
                                   uint64_t Packed, PlanFor Plan) {
  if (auto Err = Shared.placeOutputs(Parts, Where, Packed))
    return Err;
  return Shared.sendResult(SeqNo, Plan(Packed), outputBytes(Parts), Where);
}

} // namespace catalyst::remote::executor
