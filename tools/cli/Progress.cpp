//===- Progress.cpp - A progress bar for a launch that takes a while ------===//

#include "Progress.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::cli {

namespace {

constexpr size_t BarWidth = 30;
constexpr uint64_t MinBytes = uint64_t(64) << 20;
constexpr std::chrono::milliseconds After{1000}, Every{100};

std::string bar(uint64_t Done, uint64_t Total) {
  size_t Full = Total ? size_t(std::min<uint64_t>(Done, Total) * BarWidth / Total) : 0;
  return "[" + std::string(Full, '#') + std::string(BarWidth - Full, '.') + "]";
}

double mib(uint64_t Bytes) {
  return Bytes / double(1 << 20);
}

// What the line says after Elapsed, having moved Sent and Received bytes.
std::string line(uint64_t InputBytes, uint64_t OutputBytes, uint64_t Sent, uint64_t Received,
                 std::chrono::milliseconds Elapsed) {
  double Seconds = Elapsed.count() / 1000.0;
  if (Sent < InputBytes)
    return formatv("sending  {0} {1,3}%  {2:f1} of {3:f1} MiB  {4:f1} s", bar(Sent, InputBytes),
                   Sent * 100 / InputBytes, mib(Sent), mib(InputBytes), Seconds);
  // Heartbeats arrive while the kernel runs: a few bytes are not outputs.
  if (Received < (64 << 10))
    return formatv("sent {0:f1} MiB, the kernel is running  {1:f1} s", mib(InputBytes), Seconds);
  if (OutputBytes && Received < OutputBytes)
    return formatv("receiving {0} {1,3}%  {2:f1} of {3:f1} MiB  {4:f1} s",
                   bar(Received, OutputBytes), Received * 100 / OutputBytes, mib(Received),
                   mib(OutputBytes), Seconds);
  return formatv("receiving  {0:f1} MiB  {1:f1} s", mib(Received), Seconds);
}

} // namespace

LaunchProgress::LaunchProgress(const Session &S, uint64_t InputBytes, uint64_t OutputBytes)
    : S(S), InputBytes(InputBytes), OutputBytes(OutputBytes), Start(S.traffic()),
      Began(std::chrono::steady_clock::now()) {
  if (::isatty(STDERR_FILENO))
    Watcher = std::thread([this] { watch(); });
}

LaunchProgress::~LaunchProgress() {
  if (!Watcher.joinable())
    return;
  {
    std::lock_guard<std::mutex> Lock(M);
    Done = true;
  }
  Wake.notify_one();
  Watcher.join();
}

// Drawn with a carriage return and erased to the end of the line, so each
// drawing replaces the last; erased altogether at the end.
void LaunchProgress::watch() {
  bool Drawn = false;
  std::unique_lock<std::mutex> Lock(M);
  while (!Wake.wait_for(Lock, Every, [this] { return Done; })) {
    auto Elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - Began);
    Traffic Now = S.traffic();
    uint64_t Sent = Now.Sent - Start.Sent, Received = Now.Received - Start.Received;
    bool Large = std::max(InputBytes + OutputBytes, Sent + Received) > MinBytes;
    if (Elapsed < After || !Large)
      continue;
    std::fprintf(stderr, "\rcatalyst-remote: %s\033[K",
                 line(InputBytes, OutputBytes, Sent, Received, Elapsed).c_str());
    std::fflush(stderr);
    Drawn = true;
  }
  if (Drawn) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

} // namespace catalyst::remote::cli
