//===- FrameFuzz.cpp - The transport's read path on any byte stream -------===//
//
// Input: the bytes a peer sends, as they are. They go through a socketpair
// into a real SocketTransport (1 MiB message limit) whose client takes every
// message and whose payload handler places every payload in a buffer of its
// size; the stream then ends. Headers, sizes, opcodes, plans, payloads and
// hangup messages are all the peer's: the transport must frame, refuse or
// disconnect, never crash or read outside a buffer.
//
//===----------------------------------------------------------------------===//

#include "wire/SocketTransport.h"

#include <condition_variable>
#include <mutex>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

using namespace catalyst::remote;
using namespace llvm;
using namespace llvm::orc;

namespace {

class Sink final : public SimpleRemoteEPCTransportClient, public wire::PayloadHandler {
public:
  Expected<HandleMessageAction> handleMessage(SimpleRemoteEPCOpcode OpC, uint64_t, ExecutorAddr,
                                              shared::WrapperFunctionBuffer Args) override {
    return OpC == SimpleRemoteEPCOpcode::Hangup ? EndSession : ContinueSession;
  }
  void handleDisconnect(Error Err) override {
    consumeError(std::move(Err)); // a stream that ends badly ends: that is the point
    std::lock_guard<std::mutex> Lock(M);
    Ended = true;
    Changed.notify_all();
  }
  Expected<std::vector<iovec>> place(wire::PayloadOpcode, uint64_t, ArrayRef<char> Plan,
                                     uint64_t PayloadBytes) override {
    if (!Plan.empty() && Plan[0] == 'x')
      return createStringError(inconvertibleErrorCode(), "refused by the plan");
    Payload.assign(PayloadBytes, 0); // the transport bounds it by its limit
    if (PayloadBytes == 0)
      return std::vector<iovec>();
    return std::vector<iovec>{{Payload.data(), Payload.size()}};
  }
  void finish(wire::PayloadOpcode, uint64_t, shared::WrapperFunctionBuffer, Error Err) override {
    consumeError(std::move(Err)); // place() refused it; nobody waits
  }
  void disconnected() override {}

  void waitForEnd() {
    std::unique_lock<std::mutex> Lock(M);
    Changed.wait(Lock, [this] { return Ended; });
  }

private:
  std::vector<char> Payload;
  std::mutex M;
  std::condition_variable Changed;
  bool Ended = false;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  int Fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, Fds) != 0)
    __builtin_trap();
  // The whole input fits the socket's buffer, so it can be written first.
  int Buffer = int(Size) + 4096;
  setsockopt(Fds[1], SOL_SOCKET, SO_SNDBUF, &Buffer, sizeof(Buffer));
  setsockopt(Fds[0], SOL_SOCKET, SO_RCVBUF, &Buffer, sizeof(Buffer));
  for (size_t Done = 0; Done < Size;) {
    ssize_t N = write(Fds[1], Data + Done, Size - Done);
    if (N <= 0)
      __builtin_trap();
    Done += N;
  }
  shutdown(Fds[1], SHUT_WR);
  Sink Client;
  wire::TransportOptions Opts;
  Opts.MaxMessageSize = 1 << 20;
  auto T = wire::SocketTransport::Create(Client, Fds[0], Opts);
  if (!T)
    __builtin_trap();
  (*T)->setPayloadHandler(&Client);
  if (auto Err = (*T)->start())
    __builtin_trap();
  Client.waitForEnd();
  T->reset();
  close(Fds[1]);
  return 0;
}
