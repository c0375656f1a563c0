//===- Heartbeat.cpp - Telling the host a busy executor is alive ----------===//

#include "Heartbeat.h"

#include "Log.h"
#include "wire/HangupKind.h"
#include "wire/Protocol.h"
#include "wire/SendMark.h"
#include "wire/SocketTransport.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace catalyst::remote::executor {

namespace {

// Set from a signal handler, read there too: lock-free atomics,
// initialized statically. StopFd is the socket to shut down once no work
// is in progress (Working), -1 until the connection is told to stop.
std::atomic<bool> Stopping{false};
std::atomic<int> StopFd{-1};
std::atomic<unsigned> Working{0};
// Work in progress whose reply has not started to go out (Busy::Answered),
// changed under the heartbeat's Ending lock.
std::atomic<unsigned> Owed{0};
// The innermost work of the calling thread.
thread_local Heartbeat::Busy *CurrentWork = nullptr;
static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<unsigned>::is_always_lock_free);

// The Hangup frame a stopping connection sends, made before any stop
// signal is handled, and the mark of the transport it must not interrupt
// (published last, once the frame is there).
std::atomic<wire::SendMark *> StopMark{nullptr};
char StopFrame[256];
size_t StopFrameBytes = 0;
static_assert(std::atomic<wire::SendMark *>::is_always_lock_free);

// Tells the host why the session ends, when no message is being written
// and the stream is not TLS's: takes the stream for good, as a crash report
// does, so that nothing is sent after it. It goes at once or not at all
// (a full socket buffer: the host finds the connection closed unexplained).
// Async-signal-safe.
void sayWhy(int Fd) {
  wire::SendMark *Mark = StopMark.load(std::memory_order_acquire);
  if (!Mark || Mark->Sealed.load(std::memory_order_acquire))
    return;
  bool Free = false;
  if (!Mark->Busy.compare_exchange_strong(Free, true, std::memory_order_acquire))
    return;
  Mark->Until.store(wire::SendMark::Never, std::memory_order_release);
  for (size_t Sent = 0; Sent < StopFrameBytes;) {
    ssize_t N = ::send(Fd, StopFrame + Sent, StopFrameBytes - Sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return;
    Sent += size_t(N);
  }
}

// Ends the session as a hangup would, saying why; whichever of the stop and
// the end of the last work comes second gets here (both may: a second
// shutdown does nothing, nor does a second word).
void shutDown(int Fd) {
  if (Fd < 0)
    return;
  sayWhy(Fd);
  // Fails only on a connection already ended, which is what this asks for.
  ::shutdown(Fd, SHUT_RDWR);
}

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

// Never destroyed: a kernel that calls exit() runs static destructors while
// the beating thread still runs, and a joinable std::thread's destructor
// would abort the process instead of letting it exit with the kernel's
// status.
Heartbeat &Heartbeat::get() {
  static Heartbeat *H = new Heartbeat;
  return *H;
}

// Sequentially consistent, as the count's changes in Busy: the stop sees
// work in progress, or the work's end sees the stop, or both.
void Heartbeat::stopWhenIdle(int Fd) {
  Stopping.store(true, std::memory_order_relaxed);
  StopFd.store(Fd);
  if (Working.load() == 0)
    shutDown(Fd);
}

void Heartbeat::sayWhyOnStop(wire::SendMark &Mark) {
  std::string Frame = wire::encodeHangupFrame(
      (wire::StopNotice + ": its connection process was told to end (SIGTERM or SIGHUP)").str());
  if (Frame.size() > sizeof(StopFrame) || StopMark.load())
    return;
  std::memcpy(StopFrame, Frame.data(), Frame.size());
  StopFrameBytes = Frame.size();
  StopMark.store(&Mark, std::memory_order_release);
}

Heartbeat::Busy::Busy() : Outer(CurrentWork) {
  CurrentWork = this;
  Owed.fetch_add(1);
  if (Working.fetch_add(1) == 0)
    get().Since.store(nowNs(), std::memory_order_release);
}

Heartbeat::Busy::~Busy() {
  CurrentWork = Outer;
  unsigned Before;
  {
    sync::MutexLock Lock(get().Ending);
    if (!Answered)
      Owed.fetch_sub(1);
    Before = Working.fetch_sub(1);
  }
  if (Before == 1)
    shutDown(StopFd.load());
}

void Heartbeat::answering() {
  Busy *Work = CurrentWork;
  if (!Work || Work->Answered)
    return;
  sync::MutexLock Lock(get().Ending);
  Work->Answered = true;
  Owed.fetch_sub(1);
}

void Heartbeat::attach(wire::SocketTransport &T) {
  sync::MutexLock Lock(M);
  Transport = &T;
}

void Heartbeat::enable(std::chrono::milliseconds Interval) {
  sync::MutexLock Lock(M);
  if (Beater.joinable() || Stopped || !Transport || Interval.count() <= 0)
    return;
  // A host asking for less gets the floor: beats more often than that
  // would cost the kernels a CPU, and the host's timeout cannot be so short.
  Interval = std::max(Interval, wire::MinHeartbeatInterval);
  Beater = std::thread([this, Interval] { run(Interval); });
}

void Heartbeat::stop() {
  std::thread Ending;
  {
    sync::MutexLock Lock(M);
    Stopped = true;
    Ending = std::move(Beater);
  }
  Woken.notify_all();
  // Bounded: the session is over, so the socket is shut down and a
  // heartbeat being sent fails at once.
  if (Ending.joinable())
    Ending.join();
  sync::MutexLock Lock(M);
  Transport = nullptr;
}

// Sleeps For, or until stop(); false once stop() was called.
bool Heartbeat::pause(std::chrono::milliseconds For) {
  sync::UniqueLock Lock(M);
  return !Woken.wait_for(Lock, For, [this]() REQUIRES(M) { return Stopped; });
}

// The host closed its end while nobody reads: a FIN or a reset is pending.
// Also true once the session ended, as the transport shuts the socket down.
bool Heartbeat::hostGone() const {
  pollfd P{Transport->fd(), POLLRDHUP, 0};
  return ::poll(&P, 1, 0) > 0 && (P.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

// Why the socket closed under a running kernel.
std::string Heartbeat::goneReason() const {
  if (Stopping.load(std::memory_order_relaxed))
    return wire::StopNotice.str();
  std::string Closed = Transport->closeReason();
  return Closed.empty() ? "the host closed the connection"
                        : "the executor closed the connection: " + Closed;
}

// The work seen in progress may have answered since (the host gone after
// reading its reply): the process ends only if some is still owed to the
// host, and then before any of it can answer or end.
void Heartbeat::endIfStillOwed(const std::string &Why) {
  sync::MutexLock Lock(Ending);
  if (Owed.load() != 0)
    endProcess(Why);
}

// Runs until stop(), not until the transport disconnects: a batched kernel
// may still run on a worker after the host has gone, and the server waits
// for it before the session ends, so the host gone must still end the
// process then.
void Heartbeat::run(std::chrono::milliseconds Interval) {
  const int64_t Every = std::chrono::duration_cast<std::chrono::nanoseconds>(Interval).count();
  int64_t LastBeat = 0;
  while (pause(Interval / 2)) {
    if (Working.load(std::memory_order_acquire) == 0)
      continue;
    if (hostGone()) {
      endIfStillOwed(goneReason());
      continue;
    }
    int64_t Now = nowNs();
    if (Now - std::max(Since.load(std::memory_order_acquire), LastBeat) < Every)
      continue;
    if (auto Err = Transport->sendHeartbeat())
      endIfStillOwed("a heartbeat could not be sent: " + llvm::toString(std::move(Err)));
    LastBeat = Now;
  }
}

} // namespace catalyst::remote::executor
