//===- PayloadRouter.cpp - Which service a payload message is for ---------===//

#include "PayloadRouter.h"

using namespace llvm;

namespace catalyst::remote::executor {

void PayloadRouter::attach(wire::SocketTransport &T) {
  Launches.attach(T);
  Residents.attach(T);
  T.setPayloadHandler(this);
}

void PayloadRouter::detach() {
  Launches.detach();
  Residents.detach();
}

Expected<std::vector<iovec>> PayloadRouter::place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                                  ArrayRef<char> Plan, uint64_t PayloadBytes) {
  // Anything but a resident request goes to the launches, which refuse
  // what is not theirs either.
  Current =
      wire::isResidentOpcode(OpC) ? static_cast<wire::PayloadHandler *>(&Residents) : &Launches;
  return Current->place(OpC, SeqNo, Plan, PayloadBytes);
}

} // namespace catalyst::remote::executor
