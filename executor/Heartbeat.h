//===- Heartbeat.h - Telling the host a busy executor is alive --*- C++ -*-===//
//
// A host that waits for a reply cannot tell a kernel that runs for an hour
// from a connection process that stopped (a hung machine, SIGSTOP, a cable
// cut without a reset). So while this process works on a request (a
// zero-copy kernel on the reader thread, a task on a worker), a thread of
// its own, which never runs kernels, sends the host a heartbeat frame every
// interval the host asked for; a request shorter than the interval costs
// two atomic updates and no frame. The same thread notices a host that has
// gone (one that dropped a launch past its deadline, or died) while a
// kernel runs, and ends this process: a running kernel cannot be
// interrupted, and nobody would read its result. The thread lives from the
// host's asking until the session is over: the connection stops and joins
// it before the transport goes (TransportHandoff.h).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_HEARTBEAT_H
#define CATALYST_REMOTE_EXECUTOR_HEARTBEAT_H

#include "sync/Mutex.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace catalyst::remote::wire {
class SocketTransport;
struct SendMark;
} // namespace catalyst::remote::wire

namespace catalyst::remote::executor {

// Threads: attach() on the connection's reader thread, enable() on a
// worker, stop() on the thread that waits for the server; the beating
// thread (Beater) runs run(), pause(), hostGone() and goneReason(); Busy
// and answering() on any thread; stopWhenIdle() in a signal handler.
class Heartbeat {
public:
  static Heartbeat &get(); // one per connection process

  // The connection's transport (TransportHandoff), on the reader thread
  // before the first request: enable() comes in one.
  void attach(wire::SocketTransport &T);
  // Starts beating every Interval while work is in progress; the host asks
  // for it once, when it opens the session. On a worker; does nothing
  // once stop() was called.
  void enable(std::chrono::milliseconds Interval);
  // Stops the beating thread and joins it, and forgets the transport: once
  // this returns, nothing here touches it. Until then the thread keeps
  // watching the socket after the session ended, while a kernel still
  // runs. On the thread that waits for the server, once no request is in
  // progress any more (TransportHandoff::takeBack()); never on the beating
  // thread. Once for good: a later enable() starts nothing.
  void stop();

  // The executor is stopping this connection (SIGTERM): a closed socket is
  // then its own doing, not the host's. The work in progress finishes and
  // its reply goes out; then, or now when nothing is in progress, Fd (the
  // connection's socket) is shut down, which ends the session as a hangup
  // would. Safe in a signal handler.
  static void stopWhenIdle(int Fd);
  // Before the stop signal is handled: the mark the connection's transport
  // sends under (SocketTransport.h). The stop then tells the host why,
  // in a Hangup frame, unless a message is being written or TLS seals
  // the stream (a frame from outside the transport would break either).
  static void sayWhyOnStop(wire::SendMark &Mark);

  // Marks work in progress for its lifetime, on any thread. Work covers a
  // request from its dispatch to its reply sent; it is owed to the host
  // until its reply starts to go out (answering()). A host gone ends the
  // process only while work is owed: a host may read a reply and close at
  // once, before the thread that sent it has ended its work. Its end waits
  // while the beating thread is ending the process for it (Ending).
  class Busy {
  public:
    Busy();
    ~Busy();
    Busy(const Busy &) = delete;
    Busy &operator=(const Busy &) = delete;

  private:
    friend class Heartbeat;
    Busy *Outer;           // the thread's enclosing work, if any
    bool Answered = false; // its reply has started to go out
  };
  // The calling thread's work (its innermost Busy) is about to send its
  // reply: it is no longer owed. Does nothing on a thread without work or
  // whose work already answered. The transport calls it
  // (TransportOptions::BeforeReply).
  static void answering();

private:
  Heartbeat() = default;
  void run(std::chrono::milliseconds Interval);
  bool pause(std::chrono::milliseconds For);
  bool hostGone() const;
  std::string goneReason() const;
  void endIfStillOwed(const std::string &Why);

  // Set by attach() and cleared by stop(), under M; read without it by the
  // beating thread, which enable() starts after attach() and stop() joins
  // before clearing it.
  wire::SocketTransport *Transport = nullptr;
  // Work in progress is counted outside the object (Heartbeat.cpp), where
  // a signal handler may read it.
  std::atomic<int64_t> Since{0}; // steady-clock ns when work last began
  sync::Mutex M;                 // guards Transport's changes, Beater and Stopped
  sync::CondVar Woken;           // with M: Stopped was set
  bool Stopped GUARDED_BY(M) = false;
  // Started by enable() on a worker, joined by stop() on the serving thread.
  std::thread Beater GUARDED_BY(M);
  // Held by the beating thread from its last look at the work in progress
  // to the process's end, and by ~Busy around the count's decrease: work
  // that ends meanwhile cannot finish, so its thread is still there when
  // the process ends, rather than done and never joined.
  sync::Mutex Ending;
};

} // namespace catalyst::remote::executor

#endif
