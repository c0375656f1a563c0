//===- Heartbeat.cpp - Telling the host a busy executor is alive ----------===//

#include "Heartbeat.h"

#include "../engine/wire/SocketTransport.h"
#include "Log.h"

#include <algorithm>
#include <poll.h>
#include <unistd.h>

namespace catalyst::remote::executor {

namespace {

// Set from a signal handler: a lock-free atomic, initialized statically.
std::atomic<bool> Stopping{false};
static_assert(std::atomic<bool>::is_always_lock_free);

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Ends the process from the heartbeat thread: the reader thread is inside
// a kernel. The listener removes the connection's assets when it reaps it.
[[noreturn]] void endProcess(const std::string &Why) {
  LogLine() << "catalyst-remote-executor[" << ::getpid() << "]: " << Why
            << "; ending the connection process while its kernel runs";
  ::_exit(3);
}

} // namespace

Heartbeat &Heartbeat::get() {
  static Heartbeat H;
  return H;
}

void Heartbeat::noteStopping() {
  Stopping.store(true, std::memory_order_relaxed);
}

Heartbeat::Busy::Busy() {
  Heartbeat &H = get();
  if (H.Working.fetch_add(1, std::memory_order_acq_rel) == 0)
    H.Since.store(nowNs(), std::memory_order_release);
}

Heartbeat::Busy::~Busy() {
  get().Working.fetch_sub(1, std::memory_order_acq_rel);
}

void Heartbeat::enable(std::chrono::milliseconds Interval) {
  std::lock_guard<std::mutex> Lock(M);
  if (Beater.joinable() || !Transport || Interval.count() <= 0)
    return;
  Beater = std::thread([this, Interval] { run(Interval); });
  // Never joined: it beats until the connection ends, and the process
  // ends with it (_exit, no static destructors).
  Beater.detach();
}

// The host closed its end while nobody reads: a FIN or a reset is pending.
bool Heartbeat::hostGone() const {
  pollfd P{Transport->fd(), POLLRDHUP, 0};
  return ::poll(&P, 1, 0) > 0 && (P.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

void Heartbeat::run(std::chrono::milliseconds Interval) {
  const int64_t Every = std::chrono::duration_cast<std::chrono::nanoseconds>(Interval).count();
  int64_t LastBeat = 0;
  while (!Transport->disconnected()) {
    std::this_thread::sleep_for(Interval / 2);
    if (Working.load(std::memory_order_acquire) == 0)
      continue;
    if (hostGone())
      endProcess(Stopping.load(std::memory_order_relaxed) ? "the executor is stopping"
                                                          : "the host closed the connection");
    int64_t Now = nowNs();
    if (Now - std::max(Since.load(std::memory_order_acquire), LastBeat) < Every)
      continue;
    if (auto Err = Transport->sendHeartbeat())
      endProcess("a heartbeat could not be sent: " + llvm::toString(std::move(Err)));
    LastBeat = Now;
  }
}

} // namespace catalyst::remote::executor
