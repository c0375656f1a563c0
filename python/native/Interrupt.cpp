//===- Interrupt.cpp - Ctrl-C during a call that waits in C++ -------------===//

#include "Interrupt.h"

#include "Errors.h"
#include "catalyst/remote/RemoteBindings.h"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <pybind11/pybind11.h>
#include <thread>
#include <unistd.h>

namespace catalyst::remote::python {

namespace py = pybind11;

namespace {

unsigned long MainThread = 0;

// Set by the signal handler, cleared by each guard.
std::atomic<bool> Tripped{false};
// The handle the main thread's call runs on; 0 between calls. The watcher
// closes it at most once (exchange).
std::atomic<int64_t> Running{0};
// The signal handler writes a byte; the watcher reads it. Made once.
int Wake[2] = {-1, -1};
std::once_flag WatcherStarted;

void onSigint(int) {
  int Saved = errno;
  Tripped.store(true);
  char Byte = 1;
  // Nothing to do on failure: the pipe is full only when a wakeup is
  // already pending, and the flag above is what the call checks.
  [[maybe_unused]] ssize_t N = ::write(Wake[1], &Byte, 1);
  errno = Saved;
}

// Closes the running call's target when SIGINT arrives. Lives as long as
// the process; blocked in read() when idle.
void watch() {
  for (;;) {
    char Byte;
    ssize_t N = ::read(Wake[0], &Byte, 1);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return;
    if (int64_t H = Running.exchange(0))
      // Its failure, if any, is the interrupted call's to report: the
      // close ends that call either way.
      (void)catalyst_remote_close(H);
  }
}

bool startWatcher() {
  bool Ok = true;
  std::call_once(WatcherStarted, [&] {
    // The reading end blocks; only the handler's write must never block.
    if (::pipe2(Wake, O_CLOEXEC) != 0 || ::fcntl(Wake[1], F_SETFL, O_NONBLOCK) != 0) {
      Ok = false;
      return;
    }
    std::thread(watch).detach();
  });
  return Ok && Wake[0] >= 0;
}

// Whether SIGINT goes to a handler of Python's (not SIG_IGN, not SIG_DFL).
bool pythonHandlesSigint() {
  struct sigaction Now {};
  if (::sigaction(SIGINT, nullptr, &Now) != 0)
    return false;
  return !(Now.sa_flags & SA_SIGINFO) && Now.sa_handler != SIG_IGN && Now.sa_handler != SIG_DFL;
}

} // namespace

void recordMainThread() {
  MainThread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

InterruptibleCall::InterruptibleCall(int64_t Handle) : Handle(Handle) {
  if (PyThread_get_thread_ident() != MainThread || !pythonHandlesSigint() || !startWatcher())
    return;
  Tripped.store(false);
  Running.store(Handle);
  struct sigaction Ours {};
  Ours.sa_handler = onSigint;
  sigemptyset(&Ours.sa_mask);
  Installed = ::sigaction(SIGINT, &Ours, &Previous) == 0;
  if (!Installed)
    Running.store(0);
}

InterruptibleCall::~InterruptibleCall() {
  restore();
}

void InterruptibleCall::restore() {
  if (!Installed)
    return;
  ::sigaction(SIGINT, &Previous, nullptr);
  Installed = false;
  Running.store(0);
}

bool InterruptibleCall::interrupted() {
  restore();
  return Tripped.exchange(false);
}

void raiseInterrupt() {
  PyErr_SetInterruptEx(SIGINT);
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  raise(CATALYST_REMOTE_CLOSED, "the session was closed: SIGINT interrupted its call");
}

} // namespace catalyst::remote::python
