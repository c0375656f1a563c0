//===- CrashReporter.cpp - Telling the host why its kernel died -----------===//

#include "CrashReporter.h"

#include "wire/HangupKind.h"
#include "wire/SocketTransport.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace catalyst::remote::executor {

namespace {

constexpr int FatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int NumFatal = sizeof(FatalSignals) / sizeof(FatalSignals[0]);

// Set on the reader thread, cleared on the serving thread, read by the
// handlers on whichever thread crashed: lock-free, hence async-signal-safe.
std::atomic<wire::SocketTransport *> Armed{nullptr};
static_assert(std::atomic<wire::SocketTransport *>::is_always_lock_free);
// Written by armCrashReporter() before Armed is set; read by the handlers.
std::string Frames[NumFatal];

// A TLS stream's records can only be made by OpenSSL, which a signal
// handler must not call (it allocates and locks). Under TLS the handler
// hands the report to this thread, which waits for it from arming to
// disarming, and waits for it to go, a bounded while. Made by
// armCrashReporter on the reader thread (TransportHandoff hands the
// transport out there), ended on the serving thread; the pipe's ends are
// read by the handlers.
struct Standby {
  int Pipe[2] = {-1, -1};
  std::thread Thread;
  std::atomic<bool> Standing{false}; // the thread waits: handlers may hand over
  std::atomic<bool> Sent{false};
};
// Never destroyed: a kernel that calls exit() runs static destructors
// while the thread may still stand, and destroying a joinable std::thread
// aborts the process, which would then be reported as a crash.
Standby &Relay = *new Standby;
constexpr unsigned char StopRelay = 0xff;
// How long a handler waits for the standby thread's report to go out.
constexpr int RelayWaitMs = 1000;

void relayReports(wire::SocketTransport *T) {
  unsigned char I = 0;
  while (::read(Relay.Pipe[0], &I, 1) < 0 && errno == EINTR) {
  }
  if (I < NumFatal && T->sendClaimed(Frames[I]))
    Relay.Sent.store(true);
}

// From a handler: hands frame I to the standby thread and waits for it.
void sendThroughRelay(int I) {
  unsigned char Byte = static_cast<unsigned char>(I);
  if (::write(Relay.Pipe[1], &Byte, 1) != 1)
    return;
  for (int Ms = 0; Ms < RelayWaitMs && !Relay.Sent.load(); ++Ms) {
    timespec Pause{0, 1000 * 1000};
    ::nanosleep(&Pause, nullptr);
  }
}

// Another thread may be just done with a message, its last bytes out but
// its flag not yet cleared: give it up to 10 ms rather than lose the
// report. A message still partly written after that gets no frame after
// it (nor from the listener, which finds the stream cut mid-message).
bool claimConnection(wire::SocketTransport &T) {
  for (int Try = 0; Try < 100; ++Try) {
    if (T.claimStream())
      return true;
    timespec Pause{0, 100 * 1000};
    ::nanosleep(&Pause, nullptr); // async-signal-safe, unlike most waits
  }
  return false;
}

void onFatalSignal(int Sig) {
  wire::SocketTransport *T = Armed.load();
  for (int I = 0; I < NumFatal; ++I) {
    if (FatalSignals[I] != Sig || !T || !claimConnection(*T))
      continue;
    if (Relay.Standing.load()) {
      sendThroughRelay(I);
      continue;
    }
    const char *P = Frames[I].data();
    size_t Left = Frames[I].size();
    while (Left > 0) {
      ssize_t N = ::write(T->fd(), P, Left);
      if (N <= 0)
        break;
      P += N;
      Left -= N;
    }
  }
  // Cannot fail for the fatal signal being handled; raise() then ends the process.
  std::signal(Sig, SIG_DFL);
  std::raise(Sig);
}

} // namespace

void prepareThreadForCrashes() {
  // Lives as long as the thread; the process ends with its connection.
  constexpr size_t Size = 64 * 1024;
  void *Stack = ::mmap(nullptr, Size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (Stack == MAP_FAILED)
    return;
  stack_t SS{};
  SS.ss_sp = Stack;
  SS.ss_size = Size;
  ::sigaltstack(&SS, nullptr);
}

void quietBeforeKernel() {
  // A send takes microseconds; one stuck for long is a peer that reads
  // nothing, and the kernel runs regardless.
  if (wire::SocketTransport *T = Armed.load())
    T->waitUntilQuiet(std::chrono::milliseconds(100));
}

void armCrashReporter(wire::SocketTransport &Transport) {
  for (int I = 0; I < NumFatal; ++I) {
    Frames[I] = wire::encodeHangupFrame(wire::KernelCrashReport.str() + std::to_string(::getpid()) +
                                        " with signal " + std::to_string(FatalSignals[I]) + " (" +
                                        ::strsignal(FatalSignals[I]) + ")");
    struct sigaction SA {};
    SA.sa_handler = onFatalSignal;
    SA.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&SA.sa_mask);
    // Cannot fail: a valid handler for signals a process may catch.
    ::sigaction(FatalSignals[I], &SA, nullptr);
  }
  if (Transport.overTls() && ::pipe2(Relay.Pipe, O_CLOEXEC) == 0) {
    Relay.Thread = std::thread(relayReports, &Transport);
    Relay.Standing.store(true);
  }
  Armed.store(&Transport);
}

void disarmCrashReporter() {
  Armed.store(nullptr);
  if (!Relay.Standing.exchange(false))
    return;
  // Best effort: a full pipe cannot be, one byte at most was written.
  [[maybe_unused]] ssize_t N = ::write(Relay.Pipe[1], &StopRelay, 1);
  Relay.Thread.join();
  ::close(Relay.Pipe[0]);
  ::close(Relay.Pipe[1]);
  Relay.Pipe[0] = Relay.Pipe[1] = -1;
}

} // namespace catalyst::remote::executor
