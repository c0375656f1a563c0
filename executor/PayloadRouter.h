//===- PayloadRouter.h - Which service a payload message is for -*- C++ -*-===//
//
// A transport has one payload handler; a connection serves two kinds of
// payload message: launches (ZeroCopyService) and residents
// (ResidentService). The router is the transport's handler and passes each
// message to its service by opcode, every call of one message to the same
// one. Both services outlive it.
//
// Threads: the transport's reader; attach() and detach() as
// TransportHandoff.h says.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_PAYLOADROUTER_H
#define CATALYST_REMOTE_EXECUTOR_PAYLOADROUTER_H

#include "ResidentService.h"
#include "ZeroCopyService.h"
#include "wire/SocketTransport.h"

#include <sys/uio.h>

namespace catalyst::remote::executor {

class PayloadRouter final : public wire::PayloadHandler {
public:
  PayloadRouter(ZeroCopyService &Launches, ResidentService &Residents)
      : Launches(Launches), Residents(Residents) {}

  // Makes this T's payload handler and lends T to both services.
  void attach(wire::SocketTransport &T);
  void detach();

  llvm::Expected<std::vector<iovec>> place(wire::PayloadOpcode OpC, uint64_t SeqNo,
                                           llvm::ArrayRef<char> Plan,
                                           uint64_t PayloadBytes) override;
  wire::PayloadSink *sinkFor(size_t Piece) override { return Current->sinkFor(Piece); }
  void finish(wire::PayloadOpcode OpC, uint64_t SeqNo,
              llvm::orc::shared::WrapperFunctionBuffer Plan, llvm::Error Err) override {
    Current->finish(OpC, SeqNo, std::move(Plan), std::move(Err));
  }
  void disconnected() override {
    Launches.disconnected();
    Residents.disconnected();
  }

private:
  ZeroCopyService &Launches;
  ResidentService &Residents;
  wire::PayloadHandler *Current = &Launches; // the message being read's (reader)
};

} // namespace catalyst::remote::executor

#endif
