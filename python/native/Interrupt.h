//===- Interrupt.h - Ctrl-C during a call that waits in C++ -----*- C++ -*-===//
//
// Python raises KeyboardInterrupt between bytecodes, so a launch waiting in
// C++ on Python's main thread would not see Ctrl-C until it finished, which
// may be hours. So the extension puts a SIGINT handler of its own in front
// of Python's: always passing the signal on to Python's, and while an
// InterruptibleCall runs, also closing the call's target (from a watcher
// thread, since a signal handler may do almost nothing), which ends the
// wait at once; the call then raises the KeyboardInterrupt Python's handler
// made pending, as if the signal had come between bytecodes. The target
// stays closed: the executor's connection process is gone with the
// connection, and whatever the kernel was doing with it.
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
// ignored, not the default action); otherwise a no-op.
//
// signal.signal() replaces ours; it is put back in front of the new
// handler without a system call on the launch path, which a tiny launch
// cannot afford: the first main-thread call after a quiet second checks
// and wakes the watcher, which from then on checks every CheckEveryMs
// while a main-thread call runs (signal.signal() cannot run then), until
// a second passes without one. So a Ctrl-C within CheckEveryMs of the
// start of a call made right after signal.signal() goes to Python alone:
// KeyboardInterrupt when the call ends.
//
// Thread safety: one guard at a time (the main thread's). The signal
// handler and the watcher share only atomics and the pipe; SIGINT's
// disposition (and the handler ours chains to) is read and changed under
// a mutex that the guard holds to end its call.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_INTERRUPT_H
#define CATALYST_REMOTE_PYTHON_INTERRUPT_H

#include <csignal>
#include <cstdint>

namespace catalyst::remote::python {

// How often the watcher checks that ours handles SIGINT while main-thread
// calls run.
inline constexpr int CheckEveryMs = 50;

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
  void stop();

  bool Watching = false; // on the main thread, with a watcher
};

} // namespace catalyst::remote::python

#endif
