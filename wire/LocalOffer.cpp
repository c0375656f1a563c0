//===- LocalOffer.cpp - An executor's offer to hosts on its machine -------===//

#include "LocalOffer.h"

#include "SocketTransport.h"
#include "SpsCheck.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ExecutionEngine/Orc/Shared/SimpleRemoteEPCUtils.h"
#include "llvm/Support/MemoryBuffer.h"

#include <sys/un.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

namespace {

using SPSLocalOffer = shared::SPSArgList<shared::SPSString, shared::SPSString, uint32_t>;
using SPSSetup = shared::SPSArgList<shared::SPSSimpleRemoteEPCExecutorInfo>;

// A boot id is a UUID: 36 characters; an abstract name must fit sun_path
// after its leading NUL.
bool plausible(const LocalOffer &O) {
  return !O.Socket.empty() && O.Socket.size() < sizeof(sockaddr_un::sun_path) &&
         StringRef(O.Socket).find('\0') == StringRef::npos && O.BootId.size() == 36 && O.Pid > 0;
}

} // namespace

std::vector<char> encodeLocalOffer(const LocalOffer &Offer) {
  std::vector<char> Bytes(SPSLocalOffer::size(Offer.Socket, Offer.BootId, Offer.Pid));
  shared::SPSOutputBuffer OB(Bytes.data(), Bytes.size());
  [[maybe_unused]] bool Ok = SPSLocalOffer::serialize(OB, Offer.Socket, Offer.BootId, Offer.Pid);
  assert(Ok && "sized by SPS itself");
  return Bytes;
}

std::optional<LocalOffer> findLocalOffer(ArrayRef<char> SetupMessage) {
  constexpr size_t HeaderSize = SocketTransport::HeaderSize;
  if (SetupMessage.size() < HeaderSize)
    return std::nullopt;
  ArrayRef<char> Body = SetupMessage.drop_front(HeaderSize);
  if (!spsWellFormed<SPSSetup>(Body.data(), Body.size()))
    return std::nullopt;
  SimpleRemoteEPCExecutorInfo Info;
  shared::SPSInputBuffer IB(Body.data(), Body.size());
  if (!SPSSetup::deserialize(IB, Info))
    return std::nullopt;
  auto It = Info.BootstrapMap.find(LocalOfferKey);
  if (It == Info.BootstrapMap.end())
    return std::nullopt;
  const std::vector<char> &Value = It->second;
  LocalOffer O;
  shared::SPSInputBuffer VB(Value.data(), Value.size());
  if (!spsWellFormed<SPSLocalOffer>(Value.data(), Value.size()) ||
      !SPSLocalOffer::deserialize(VB, O.Socket, O.BootId, O.Pid) || !plausible(O))
    return std::nullopt;
  return O;
}

Expected<std::string> thisBootId() {
  const char *Path = "/proc/sys/kernel/random/boot_id";
  auto Buf = MemoryBuffer::getFileAsStream(Path);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read %s: %s", Path,
                             Buf.getError().message().c_str());
  return (*Buf)->getBuffer().trim().str();
}

} // namespace catalyst::remote::wire
