//===- CrashReporter.cpp - Telling the host why its kernel died -----------===//

#include "CrashReporter.h"

#include "../engine/wire/SocketTransport.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <string>
#include <sys/mman.h>
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
    Frames[I] = wire::encodeHangupFrame("the kernel crashed the executor's connection process " +
                                        std::to_string(::getpid()) + " with signal " +
                                        std::to_string(FatalSignals[I]) + " (" +
                                        ::strsignal(FatalSignals[I]) + ")");
    struct sigaction SA {};
    SA.sa_handler = onFatalSignal;
    SA.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&SA.sa_mask);
    ::sigaction(FatalSignals[I], &SA, nullptr);
  }
  Armed.store(&Transport);
}

void disarmCrashReporter() {
  Armed.store(nullptr);
}

} // namespace catalyst::remote::executor
