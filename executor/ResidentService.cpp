//===- ResidentService.cpp - Uploads, fetches and releases ----------------===//

#include "ResidentService.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

using namespace wire;

namespace {

Error badRequest(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "bad resident request: " + What);
}

} // namespace

Expected<std::vector<iovec>> ResidentService::place(PayloadOpcode OpC, uint64_t,
                                                    ArrayRef<char> Plan, uint64_t PayloadBytes) {
  Uploading = 0;
  Ids.clear();
  if (OpC == PayloadOpcode::Upload) {
    auto P = decodeUploadPlan(Plan, PayloadBytes);
    if (!P)
      return P.takeError();
    auto Buffer = Store.reserve(P->Id, P->Shape);
    if (!Buffer)
      return Buffer.takeError();
    Uploading = P->Id;
    if (!PayloadBytes)
      return std::vector<iovec>();
    return std::vector<iovec>{{*Buffer, size_t(PayloadBytes)}};
  }
  if (OpC != PayloadOpcode::Fetch && OpC != PayloadOpcode::Release)
    return badRequest("a host sends Upload, Fetch and Release only");
  if (PayloadBytes)
    return badRequest("a fetch or a release came with a payload of " + Twine(PayloadBytes) +
                      " bytes");
  auto Decoded = decodeResidentIds(Plan, OpC == PayloadOpcode::Fetch ? 1 : MaxReleasedAtOnce);
  if (!Decoded)
    return Decoded.takeError();
  Ids = std::move(*Decoded);
  return std::vector<iovec>();
}

void ResidentService::finish(PayloadOpcode OpC, uint64_t SeqNo, shared::WrapperFunctionBuffer,
                             Error Err) {
  Error Sent = Error::success();
  if (Err) {
    // An upload whose payload did not land keeps nothing.
    if (Uploading)
      consumeError(Store.release(Uploading)); // it was reserved: it is there to release
    Sent = reply(SeqNo, toString(std::move(Err)), {});
  } else if (OpC == PayloadOpcode::Upload) {
    Sent = reply(SeqNo, "", Store.find(Uploading)->Shape);
  } else if (OpC == PayloadOpcode::Fetch) {
    auto R = Store.get(Ids[0]);
    Sent = R ? sendValues(SeqNo, *R) : reply(SeqNo, toString(R.takeError()), {});
  } else {
    Error Refused = releaseAll();
    Sent = reply(SeqNo, Refused ? toString(std::move(Refused)) : "", {});
  }
  Uploading = 0;
  // A reply that cannot go leaves the host waiting: end the connection,
  // which fails its request on the host, and say why here.
  if (Sent) {
    errs() << "catalyst-remote-executor: ending the connection: the reply to resident request "
           << SeqNo << " could not be sent: " << toString(std::move(Sent)) << "\n";
    Transport->disconnect();
  }
}

// Frees every id it can; the error names those it could not.
Error ResidentService::releaseAll() {
  Error Refused = Error::success();
  for (uint64_t Id : Ids)
    Refused = joinErrors(std::move(Refused), Store.release(Id));
  return Refused;
}

// A Fetch's answer: the values from where they are, unless the message
// would pass the transport's limit, which the reply then names.
Error ResidentService::sendValues(uint64_t SeqNo, const ResidentStore::Resident &R) {
  std::vector<char> Plan = encodeResidentReply("", R.Shape);
  uint64_t Limit = Transport->maxMessageSize();
  if (R.Shape.Bytes > Limit || SocketTransport::HeaderSize + Plan.size() > Limit - R.Shape.Bytes)
    return reply(SeqNo,
                 "resident " + std::to_string(Ids[0]) + " of " + std::to_string(R.Shape.Bytes) +
                     " bytes does not fit a message, above this executor's limit of " +
                     std::to_string(Limit) + " bytes (--max-message)",
                 {});
  return Transport->sendWithPayload(PayloadOpcode::ResidentReply, SeqNo, Plan,
                                    PayloadPart{R.Data, R.Shape.Bytes, nullptr});
}

Error ResidentService::reply(uint64_t SeqNo, StringRef Error, const TensorShape &Shape,
                             ArrayRef<PayloadPart> Parts) {
  return Transport->sendWithPayload(PayloadOpcode::ResidentReply, SeqNo,
                                    encodeResidentReply(Error, Shape), Parts);
}

} // namespace catalyst::remote::executor
