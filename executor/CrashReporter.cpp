//===- CrashReporter.cpp - Telling the host why its kernel died -----------===//

#include "CrashReporter.h"

#include "../engine/wire/SocketTransport.h"

#include <csignal>
#include <cstring>
#include <string>
#include <unistd.h>

namespace catalyst::remote::executor {

namespace {

constexpr int FatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int NumFatal = sizeof(FatalSignals) / sizeof(FatalSignals[0]);

const wire::SocketTransport *Armed = nullptr;
std::string Frames[NumFatal];

void onFatalSignal(int Sig) {
  for (int I = 0; I < NumFatal; ++I) {
    if (FatalSignals[I] != Sig || !Armed || Armed->sending())
      continue;
    const char *P = Frames[I].data();
    size_t Left = Frames[I].size();
    while (Left > 0) {
      ssize_t N = ::write(Armed->fd(), P, Left);
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

void armCrashReporter(const wire::SocketTransport &Transport) {
  static char AltStack[64 * 1024];
  stack_t SS{};
  SS.ss_sp = AltStack;
  SS.ss_size = sizeof(AltStack);
  ::sigaltstack(&SS, nullptr);
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
  Armed = &Transport;
}

} // namespace catalyst::remote::executor
