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

// Python's own SIGINT handler (or whoever's was installed before ours),
// which ours calls on: Python then raises KeyboardInterrupt as it would
// have. Written only by the main thread while ours is not installed.
struct sigaction Chained {};

void onSigint(int Signal, siginfo_t *Info, void *Context) {
  int Saved = errno;
  if (Running.load()) {
    Tripped.store(true);
    char Byte = 1;
    // Nothing to do on failure: the pipe is full only when a wakeup is
    // already pending, and the flag above is what the call checks.
    [[maybe_unused]] ssize_t N = ::write(Wake[1], &Byte, 1);
  }
  errno = Saved;
  if (Chained.sa_flags & SA_SIGINFO)
    Chained.sa_sigaction(Signal, Info, Context);
  else if (Chained.sa_handler != SIG_IGN && Chained.sa_handler != SIG_DFL)
    Chained.sa_handler(Signal);
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

// Makes sure ours handles SIGINT, chaining to the handler it finds there;
// false when SIGINT is ignored or left to its default action (then Python
// would not raise KeyboardInterrupt either). One system call once ours is
// in place: a launch's only cost here.
bool ensureInstalled() {
  struct sigaction Now {};
  if (::sigaction(SIGINT, nullptr, &Now) != 0)
    return false;
  if ((Now.sa_flags & SA_SIGINFO) && Now.sa_sigaction == onSigint)
    return true;
  if (!(Now.sa_flags & SA_SIGINFO) && (Now.sa_handler == SIG_IGN || Now.sa_handler == SIG_DFL))
    return false;
  if (!startWatcher())
    return false;
  // Python replaced ours (signal.signal), or this is the first call.
  Chained = Now;
  struct sigaction Ours {};
  Ours.sa_sigaction = onSigint;
  Ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&Ours.sa_mask);
  return ::sigaction(SIGINT, &Ours, nullptr) == 0;
}

} // namespace

void recordMainThread() {
  MainThread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

InterruptibleCall::InterruptibleCall(int64_t Handle) {
  if (PyThread_get_thread_ident() != MainThread || !ensureInstalled())
    return;
  Tripped.store(false);
  Running.store(Handle);
  Watching = true;
}

InterruptibleCall::~InterruptibleCall() {
  Running.store(0);
}

bool InterruptibleCall::interrupted() {
  Running.store(0);
  return Watching && Tripped.exchange(false);
}

void raiseInterrupt() {
  // Python's handler ran too (chained): its exception is pending.
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  raise(CATALYST_REMOTE_CLOSED, "the session was closed: SIGINT interrupted its call");
}

} // namespace catalyst::remote::python
