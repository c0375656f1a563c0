//===- Sockets.h - What the kernel says about test sockets ------*- C++ -*-===//

#ifndef CATALYST_REMOTE_TESTS_SOCKETS_H
#define CATALYST_REMOTE_TESTS_SOCKETS_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace catalyst::remote::test {

// A loopback TCP socket bound to an ephemeral port, or to Port when one is
// given (the port of a process that just ended, say); listening when
// asked. Bound and not listening, its address refuses connections.
class LoopbackSocket {
public:
  explicit LoopbackSocket(bool Listen, uint16_t Port = 0);
  ~LoopbackSocket() { close(); }
  LoopbackSocket(const LoopbackSocket &) = delete;
  LoopbackSocket &operator=(const LoopbackSocket &) = delete;
  void close();
  std::string address() const { return "127.0.0.1:" + std::to_string(Port); }
  int fd() const { return Fd; }

private:
  int Fd = -1;
  int Port = 0;
};

// A listening port that accepts each connection and closes it at once, as
// an address where nothing serves a host would see it, counting them: a
// test waits for the attempts it needs instead of sleeping and assuming.
//
// Thread-safety: construct and destroy on one thread; the rest from any.
class ConnectionCounter {
public:
  explicit ConnectionCounter(uint16_t Port = 0);
  ~ConnectionCounter();
  ConnectionCounter(const ConnectionCounter &) = delete;
  ConnectionCounter &operator=(const ConnectionCounter &) = delete;

  std::string address() const { return Listener.address(); }
  // When each connection was accepted, so far.
  std::vector<std::chrono::steady_clock::time_point> accepted() const;
  // True once N connections were accepted; false at Deadline.
  bool waitFor(size_t N, std::chrono::steady_clock::duration Deadline) const;

private:
  void acceptLoop();

  LoopbackSocket Listener;
  std::atomic<bool> Stop{false};
  mutable std::mutex M;
  mutable std::condition_variable Changed;
  std::vector<std::chrono::steady_clock::time_point> Times; // guarded by M
  std::thread Acceptor;                                     // last: it uses the above
};

// Payload bytes this process has sent so far over its TCP connections to
// Address ("127.0.0.1:port"), as the kernel counts them (TCP_INFO). Unlike
// the engine's own counters, this sees every byte, including those of a
// launch that failed: a test can tell that a failure cost no traffic. A
// process with no such connection fails the test: its session runs over
// something else (the local socket), which this cannot see.
uint64_t tcpBytesSentTo(const std::string &Address);

} // namespace catalyst::remote::test

#endif
