//===- Interrupt.h - Ctrl-C during a call that waits in C++ -----*- C++ -*-===//
//
// Python raises KeyboardInterrupt between bytecodes, so a launch waiting in
// C++ on Python's main thread would not see Ctrl-C until it finished, which
// may be hours. While such a call runs, an InterruptibleCall takes SIGINT:
// the signal closes the call's target (from a watcher thread, since a
// signal handler may do almost nothing), which ends the wait at once; the
// call then raises KeyboardInterrupt through Python's own SIGINT handler,
// as if the signal had come between bytecodes. The target stays closed:
// the executor's connection process is gone with the connection, and
// whatever the kernel was doing with it.
//
// Usage (GIL held):
//   InterruptibleCall Guard(Handle);
//   { py::gil_scoped_release Free; Status = catalyst_remote_launch(Handle, ...); }
//   if (Guard.interrupted()) {
//     ... forget Handle, close it (again: harmless) ...
//     raiseInterrupt();    // KeyboardInterrupt, as Python's handler raises
//   }
//
// Only on Python's main thread, and only while Python itself handles SIGINT
// (not ignored, not the default action); otherwise a no-op.
//
// Thread safety: one guard at a time (the main thread's); the watcher
// thread and the signal handler share only the atomics and the pipe.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_INTERRUPT_H
#define CATALYST_REMOTE_PYTHON_INTERRUPT_H

#include <csignal>
#include <cstdint>

namespace catalyst::remote::python {

// Records Python's main thread; call once at import, GIL held.
void recordMainThread();

// With the GIL: runs Python's SIGINT handler, as if the signal came now,
// and throws what it raised (KeyboardInterrupt by default); when it raised
// nothing, throws SessionClosed, since the call's target is closed.
[[noreturn]] void raiseInterrupt();

class InterruptibleCall {
public:
  explicit InterruptibleCall(int64_t Handle);
  ~InterruptibleCall();
  InterruptibleCall(const InterruptibleCall &) = delete;
  InterruptibleCall &operator=(const InterruptibleCall &) = delete;

  // Whether SIGINT arrived while the call ran; restores Python's handler.
  bool interrupted();

private:
  void restore();

  int64_t Handle;
  bool Installed = false;
  struct sigaction Previous {};
};

} // namespace catalyst::remote::python

#endif
