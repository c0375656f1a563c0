//===- Interrupt.cpp - Ctrl-C during a call that waits in C++ -------------===//

#include "Interrupt.h"

#include "Errors.h"
#include "catalyst/remote/RemoteBindings.h"
#include "sync/Mutex.h"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <pybind11/pybind11.h>
#include <thread>
#include <unistd.h>

namespace catalyst::remote::python {

namespace py = pybind11;

namespace {

unsigned long MainThread = 0;

// Set by the signal handler during a call (before it wakes the watcher),
// cleared by each guard.
std::atomic<bool> Tripped{false};
// The handle the main thread's call runs on; 0 between calls. The watcher
// closes it at most once (exchange).
std::atomic<int64_t> Running{0};
// Main-thread calls begun: the watcher sleeps once it stops growing.
std::atomic<uint64_t> Calls{0};
// Whether the watcher waits without a deadline (no recent call).
std::atomic<bool> Asleep{true};
// Checks without a call begun before the watcher sleeps: a second.
constexpr int QuietChecks = 1000 / CheckEveryMs;
int Wake[2] = {-1, -1};
std::once_flag WatcherStarted;
bool WatcherUp = false;

// Held while SIGINT's disposition is read or changed, and by a guard
// clearing Running: the watcher changes it only while a main-thread call
// runs, when the main thread cannot be in signal.signal().
sync::Mutex Disposition;
// Python's own SIGINT handler (or whoever's was installed before ours),
// which ours calls on: Python then raises KeyboardInterrupt as it would
// have. Written under Disposition while ours is not installed.
struct sigaction Chained {};

// From the signal handler too (write() is async-signal-safe).
void wakeWatcher() {
  char Byte = 1;
  // Nothing to do on failure: the pipe is full only when bytes are
  // already there to wake the watcher.
  [[maybe_unused]] ssize_t N = ::write(Wake[1], &Byte, 1);
}

void onSigint(int Signal, siginfo_t *Info, void *Context) {
  int Saved = errno;
  if (Running.load()) {
    Tripped.store(true);
    wakeWatcher();
  }
  errno = Saved;
  if (Chained.sa_flags & SA_SIGINFO)
    Chained.sa_sigaction(Signal, Info, Context);
  else if (Chained.sa_handler != SIG_IGN && Chained.sa_handler != SIG_DFL)
    Chained.sa_handler(Signal);
}

// Makes sure ours handles SIGINT, chaining to the handler it finds there,
// unless SIGINT is ignored or left to its default action (then Python
// would not raise KeyboardInterrupt either). Disposition held.
void ensureInstalled() {
  struct sigaction Now {};
  if (::sigaction(SIGINT, nullptr, &Now) != 0)
    return;
  if ((Now.sa_flags & SA_SIGINFO) && Now.sa_sigaction == onSigint)
    return;
  if (!(Now.sa_flags & SA_SIGINFO) && (Now.sa_handler == SIG_IGN || Now.sa_handler == SIG_DFL))
    return;
  // Python replaced ours (signal.signal), or this is the first call.
  Chained = Now;
  struct sigaction Ours {};
  Ours.sa_sigaction = onSigint;
  Ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&Ours.sa_mask);
  // On failure SIGINT stays Python's alone: KeyboardInterrupt once the
  // call ends, and the next check tries again.
  (void)::sigaction(SIGINT, &Ours, nullptr);
}

void checkWhileRunning() {
  sync::MutexLock Lock(Disposition);
  if (Running.load())
    ensureInstalled();
}

// Empties the pipe; false once it is unusable.
bool drain() {
  char Bytes[64];
  ssize_t N = ::read(Wake[0], Bytes, sizeof Bytes);
  if (N < 0)
    return errno == EINTR || errno == EAGAIN;
  return N > 0;
}

// Falls asleep once no call has begun for QuietChecks checks. Asleep is
// set before Calls is read again, and a guard adds to Calls before it
// reads Asleep: one of the two sees the other.
void sleepWhenQuiet(uint64_t &Seen, int &Checks) {
  uint64_t Now = Calls.load();
  if (Now != Seen || Running.load()) {
    Seen = Now;
    Checks = 0;
    return;
  }
  if (++Checks < QuietChecks)
    return;
  Checks = 0;
  Asleep.store(true);
  if (Calls.load() != Seen)
    Asleep.store(false);
}

// Closes the running call's target when SIGINT arrives, and keeps ours
// in front of Python's while calls are being made. Lives as long as the
// process; blocked in poll() without a deadline when asleep.
void watch() {
  uint64_t Seen = Calls.load();
  int Checks = 0;
  for (;;) {
    pollfd Pipe{Wake[0], POLLIN, 0};
    int Ready = ::poll(&Pipe, 1, Asleep.load() ? -1 : CheckEveryMs);
    if (Ready < 0 && errno != EINTR)
      return;
    if (Ready > 0 && !drain())
      return;
    if (Tripped.load())
      if (int64_t H = Running.exchange(0))
        // Its failure, if any, is the interrupted call's to report: the
        // close ends that call either way.
        (void)catalyst_remote_close(H);
    if (Asleep.load())
      continue;
    checkWhileRunning();
    sleepWhenQuiet(Seen, Checks);
  }
}

bool startWatcher() {
  std::call_once(WatcherStarted, [] {
    // Neither end blocks: the handler's write must never, and the watcher
    // reads only what poll() said is there.
    if (::pipe2(Wake, O_CLOEXEC | O_NONBLOCK) != 0)
      return;
    std::thread(watch).detach();
    WatcherUp = true;
  });
  return WatcherUp;
}

// The first main-thread call after the watcher fell asleep: ours is
// checked now, and the watcher woken to check while calls go on.
void checkAndWake() {
  {
    sync::MutexLock Lock(Disposition);
    ensureInstalled();
  }
  wakeWatcher();
}

} // namespace

void recordMainThread() {
  MainThread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

InterruptibleCall::InterruptibleCall(int64_t Handle) {
  if (PyThread_get_thread_ident() != MainThread || !startWatcher())
    return;
  Calls.fetch_add(1);
  if (Asleep.load() && Asleep.exchange(false))
    checkAndWake();
  Tripped.store(false);
  Running.store(Handle);
  Watching = true;
}

InterruptibleCall::~InterruptibleCall() {
  stop();
}

void InterruptibleCall::stop() {
  if (!Watching || !Running.load())
    return;
  sync::MutexLock Lock(Disposition);
  Running.store(0);
}

bool InterruptibleCall::interrupted() {
  stop();
  return Watching && Tripped.exchange(false);
}

void raiseInterrupt() {
  // Python's handler ran too (chained): its exception is pending.
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  raise(CATALYST_REMOTE_CLOSED, "the session was closed: SIGINT interrupted its call");
}

} // namespace catalyst::remote::python
