//===- CrashReporter.h - Telling the host why its kernel died ---*- C++ -*-===//
//
// A kernel that crashes takes its connection process with it. Before it
// dies, the process sends the host an EPC Hangup naming the signal, so the
// host's error says what happened instead of "connection closed". Frames are
// built in advance: a signal handler may only write them.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_CRASHREPORTER_H
#define CATALYST_REMOTE_EXECUTOR_CRASHREPORTER_H

namespace catalyst::remote::wire {
class SocketTransport;
}

namespace catalyst::remote::executor {

// Arms handlers for fatal signals in this (connection) process, which
// report through Transport until disarmCrashReporter(). On the reader
// thread, before any kernel can run (TransportHandoff).
void armCrashReporter(wire::SocketTransport &Transport);

// Leaves the handlers without the transport, which is about to go: a crash
// after this (in the runtime's finalize hook, say) gets no frame. Once no
// kernel runs any more, on the thread that ends the session.
void disarmCrashReporter();

// Called right before a kernel runs: waits (briefly, bounded) until no
// reply is part way through being sent and counted on another thread, so
// that if the kernel ends the process (a signal, exit, _exit) the stream
// ends between messages, and the host hears why from this process or from
// its listener.
void quietBeforeKernel();

// Gives the calling thread a stack for the handlers, so that a kernel that
// overflows its own stack is still reported. Call on every thread that may
// run kernels.
void prepareThreadForCrashes();

} // namespace catalyst::remote::executor

#endif
