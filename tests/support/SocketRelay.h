//===- SocketRelay.h - A TCP port forwarded to a socket file ----*- C++ -*-===//
//
// What `ssh -L PORT:PATH` does, in the test's process: each connection to a
// loopback port gets one to the socket file PATH, and bytes and ends of
// stream are passed on both ways. The executor then sees a peer on its
// socket file that is not the host.
//
// Thread-safety: construct and destroy on one thread; address() and
// relayed() from any.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_SOCKETRELAY_H
#define CATALYST_REMOTE_TESTS_SOCKETRELAY_H

#include "Sockets.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace catalyst::remote::test {

class SocketRelay {
public:
  explicit SocketRelay(std::string Path);
  // Cuts every relayed connection and waits for its threads.
  ~SocketRelay();
  SocketRelay(const SocketRelay &) = delete;
  SocketRelay &operator=(const SocketRelay &) = delete;

  std::string address() const { return Listener.address(); }
  // Connections relayed so far.
  size_t relayed() const { return Count.load(); }

private:
  void acceptLoop();
  void relay(int Accepted);

  LoopbackSocket Listener{true};
  std::string Path;
  int StopFds[2] = {-1, -1};
  std::atomic<size_t> Count{0};
  std::mutex Mutex;     // guards Fds and Pumps
  std::vector<int> Fds; // both ends of every relayed connection
  std::vector<std::thread> Pumps;
  std::thread Acceptor; // last: it uses everything above
};

} // namespace catalyst::remote::test

#endif
