//===- RawPeer.h - The raw TCP link, for comparison -------------*- C++ -*-===//
//
// A launch's cost is bounded below by moving its bytes over the link. This
// measures that bound with nothing but TCP: a peer process reads a whole
// request of a fixed size, then writes a reply of a fixed size, over a
// TCP_NODELAY connection with blocking reads and writes. On one machine the
// same exchange over a Unix socket (startLocal) is the bound of what a
// socket can do there.
//
// The peer is a process of its own, as the executor is: a thread in the
// benchmark's process would share its address space and scheduling and so
// flatter the baseline. Sizes are agreed once per connection, so the timed
// exchanges carry no framing at all.
//
// By default the benchmark forks the peer on loopback. To measure another
// link, the peer runs where the executor runs (`catalyst-remote-bench
// --raw-peer-serve HOST:PORT`, e.g. inside the executor's network namespace)
// and the benchmark attaches to it (CATALYST_REMOTE_RAW_PEER=HOST:PORT).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_RAWPEER_H
#define CATALYST_REMOTE_BENCH_RAWPEER_H

#include "NetUtil.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::bench {

// One connection to the peer; every exchange has the same two sizes.
class RawLink {
public:
  ~RawLink();
  RawLink(const RawLink &) = delete;
  RawLink &operator=(const RawLink &) = delete;

  // Sends request() bytes from Out, then receives reply() bytes into In,
  // by default a buffer allocated (and touched) once, when the link was made.
  llvm::Error exchange(const char *Out, char *In = nullptr);

  uint64_t request() const { return Request; }
  uint64_t reply() const { return Reply; }
  // What the last exchange received.
  const std::vector<char> &received() const { return In; }

private:
  friend class RawPeer;
  RawLink(int Fd, uint64_t Request, uint64_t Reply);

  int Fd;
  uint64_t Request, Reply;
  std::vector<char> In;
};

class RawPeer {
public:
  // Listens on 127.0.0.1 (startLocal: an abstract Unix socket) and forks
  // the peer. Call while this process has a single thread: the child does
  // not exec.
  static llvm::Expected<std::unique_ptr<RawPeer>> start();
  static llvm::Expected<std::unique_ptr<RawPeer>> startLocal();
  // A peer already serving at HostPort ("host:port", "[v6]:port"), which
  // this benchmark neither starts nor stops.
  static llvm::Expected<std::unique_ptr<RawPeer>> attach(const std::string &HostPort);
  // Stops and reaps the peer if it is ours.
  ~RawPeer();
  RawPeer(const RawPeer &) = delete;
  RawPeer &operator=(const RawPeer &) = delete;

  // A new connection answering Request-byte requests with Reply-byte
  // replies. The peer serves one connection at a time: destroy a link
  // before exchanging on the next one.
  llvm::Expected<std::unique_ptr<RawLink>> connect(uint64_t Request, uint64_t Reply);

  // 0 when the peer is not ours.
  pid_t pid() const { return Pid; }
  // Numeric "host:port" of the peer.
  std::string address() const;

private:
  RawPeer(pid_t Pid, const tools::SocketAddress &Addr) : Pid(Pid), Addr(Addr) {}
  static llvm::Expected<std::unique_ptr<RawPeer>> startOn(tools::SocketAddress Addr);

  pid_t Pid;
  tools::SocketAddress Addr;
};

// The standalone peer: listens on HostPort (port 0: any), prints
// "catalyst-remote-bench: raw peer listening on HOST:PORT" on stdout, and
// serves links one after another until it is killed. Returns only when it
// cannot listen (an exit status).
int serveRawPeer(const std::string &HostPort);

} // namespace catalyst::remote::bench

#endif
