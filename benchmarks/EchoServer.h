//===- EchoServer.h - The raw loopback link, for comparison -----*- C++ -*-===//
//
// A launch's cost is bounded below by moving its bytes over the link. This
// measures that bound: a server thread reads a whole N-byte message and only
// then writes N bytes back, the same shape as a launch (inputs in, results
// out), over one TCP_NODELAY connection kept for the whole run, as a session
// keeps its connection.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_ECHOSERVER_H
#define CATALYST_REMOTE_BENCH_ECHOSERVER_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <memory>
#include <thread>

namespace catalyst::remote::bench {

class EchoServer {
public:
  // Listens on 127.0.0.1 (any port) and connects a client to it.
  static llvm::Expected<std::unique_ptr<EchoServer>> start();
  ~EchoServer();

  EchoServer(const EchoServer &) = delete;
  EchoServer &operator=(const EchoServer &) = delete;

  // Sends Bytes from Out and receives the echo into In.
  llvm::Error roundTrip(const char *Out, char *In, size_t Bytes);

private:
  EchoServer(int ServerFd, int ClientFd) : ServerFd(ServerFd), ClientFd(ClientFd) {}
  void serve();

  int ServerFd; // the accepted end, owned by the server thread while it runs
  int ClientFd;
  std::thread Server;
};

} // namespace catalyst::remote::bench

#endif
