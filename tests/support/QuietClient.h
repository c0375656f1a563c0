//===- QuietClient.h - A transport's client that takes anything -*- C++ -*-===//
//
// The receiving side that a SocketTransport needs, for tests that drive the
// transport themselves and read its peer's end as raw bytes: every message
// is taken and dropped, and the end of the connection is noted nowhere.
//
//   QuietClient Client;
//   auto T = wire::SocketTransport::Create(Client, Fd, Options);
//
// Stateless, so any thread may call it. Header-only, so that the unit test
// binaries that do not link the test support library can use it too.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_QUIETCLIENT_H
#define CATALYST_REMOTE_TESTS_QUIETCLIENT_H

#include "llvm/ExecutionEngine/Orc/Shared/SimpleRemoteEPCUtils.h"

namespace catalyst::remote::test {

class QuietClient final : public llvm::orc::SimpleRemoteEPCTransportClient {
public:
  llvm::Expected<HandleMessageAction>
  handleMessage(llvm::orc::SimpleRemoteEPCOpcode, uint64_t, llvm::orc::ExecutorAddr,
                llvm::orc::shared::WrapperFunctionBuffer) override {
    return ContinueSession;
  }
  // The test sees the end through the socket or the transport itself.
  void handleDisconnect(llvm::Error Err) override { llvm::consumeError(std::move(Err)); }
};

} // namespace catalyst::remote::test

#endif
