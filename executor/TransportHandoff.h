//===- TransportHandoff.h - Lending a connection's transport ----*- C++ -*-===//
//
// A connection's transport belongs to its EPC server, which destroys it with
// itself when the session is over. The services that talk to the host
// outside EPC replies reach it through this process's singletons: the crash
// reporter (from a fatal signal's handler), the heartbeat (a thread of its
// own), zero-copy launches and shared slabs. One TransportHandoff per
// connection lends them the transport and takes it back before it goes, so
// that none of them touches it afterwards.
//
// Who may use the transport, and until when:
//  - the reader thread (zero-copy launches, shared slabs' results): from
//    handOut(), its first act, until the server has handled the disconnect,
//    its last;
//  - the workers (EPC calls: shared slabs, the mailbox, the heartbeat's
//    start; kernels wait on it in quietBeforeKernel()): the server's
//    disconnect handling on the reader joins them, kernels still running
//    included, so none is left once waitForDisconnect() returns;
//  - the heartbeat thread: until takeBack() has stopped and joined it. It
//    keeps watching the socket after the disconnect, while the server waits
//    for a kernel on a worker, so that a host gone still ends the process;
//  - the crash reporter's signal handler: until takeBack() disarms it.
//
// Usage, in the connection process:
//   TransportHandoff Handoff(/*Extensions=*/true, /*Shared=*/Local);
//   TOpts.OnReaderStart = [&] { Handoff.handOut(*Transport); };
//   ... create the server, waitForDisconnect() ...
//   Handoff.takeBack(); // then the server, and the transport, may go
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_TRANSPORTHANDOFF_H
#define CATALYST_REMOTE_EXECUTOR_TRANSPORTHANDOFF_H

namespace catalyst::remote::wire {
class SocketTransport;
}

namespace catalyst::remote::executor {

class PayloadRouter;
class SharedSlabs;

class TransportHandoff {
public:
  // The services lent the transport besides the heartbeat and the crash
  // reporter: Payloads (launches, residents) when this project's services
  // are served, Shared when the connection is the local socket; null
  // otherwise. Both outlive this.
  TransportHandoff(PayloadRouter *Payloads, SharedSlabs *Shared)
      : Payloads(Payloads), Shared(Shared) {}
  // Takes the transport back if takeBack() was not called, late as that is:
  // call takeBack() before the server goes.
  ~TransportHandoff() { takeBack(); }
  TransportHandoff(const TransportHandoff &) = delete;
  TransportHandoff &operator=(const TransportHandoff &) = delete;

  // Lends T to the services, on T's reader thread before it reads the first
  // message (TransportOptions::OnReaderStart): a fast host may launch, and
  // a kernel crash, right after the handshake.
  void handOut(wire::SocketTransport &T);

  // Takes the transport back from every service: stops and joins the
  // heartbeat thread, disarms the crash reporter, and leaves the payload
  // services and shared slabs without it. On the thread that waits for the
  // server, once waitForDisconnect() returned (or creating the server
  // failed) and before the server is destroyed. Once; later calls, and a
  // call with nothing handed out, do nothing.
  void takeBack();

private:
  PayloadRouter *const Payloads;
  SharedSlabs *const Shared;
  // What was lent: set on the reader thread by handOut(), then read and
  // cleared by takeBack() on the serving thread, which the server's end
  // orders after the reader's last use (waitForDisconnect() waits for the
  // reader's disconnect handling).
  wire::SocketTransport *Lent = nullptr;
};

} // namespace catalyst::remote::executor

#endif
