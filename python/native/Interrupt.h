//===- Interrupt.h - Ctrl-C during a call that waits in C++ -----*- C++ -*-===//
//
// Python raises KeyboardInterrupt between bytecodes, so a launch waiting in
// C++ on Python's main thread would not see Ctrl-C until it finished, which
// may be hours. So the extension puts a SIGINT handler of its own in front
// of Python's: always passing the signal on to Python's, and while an
// InterruptibleCall runs, also closing the call's target (from a watcher
// thread, since a signal handler may do almost nothing), which ends the
// wait at once; the call then raises the KeyboardInterrupt Python's handler
// made pending, as if the signal had come between bytecodes. The target stays closed:
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
// Only on Python's main thread, and only while SIGINT has a handler (not
// ignored, not the default action); otherwise a no-op. A call costs one
// sigaction() to see that ours is still in place (signal.signal replaces
// it; the next call puts it back in front of the new one).
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

// With the GIL: runs the Python SIGINT handler the signal made pending and
// throws what it raised (KeyboardInterrupt by default); when it raised
// nothing, throws SessionClosed, since the call's target is closed.
[[noreturn]] void raiseInterrupt();

class InterruptibleCall {
public:
  explicit InterruptibleCall(int64_t Handle);
  ~InterruptibleCall();
  InterruptibleCall(const InterruptibleCall &) = delete;
  InterruptibleCall &operator=(const InterruptibleCall &) = delete;

  // Whether SIGINT arrived while the call ran; it stops watching.
  bool interrupted();

private:
  bool Watching = false;
};

} // namespace catalyst::remote::python

#endif
