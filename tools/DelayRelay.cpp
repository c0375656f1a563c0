//===- DelayRelay.cpp - catalyst-remote-delay-relay -----------------------===//
//
// A TCP relay that adds a fixed round-trip delay: every chunk of bytes it
// reads from one side is held for half the round trip, then written to the
// other side. Ends of stream are delayed the same way (a FIN is forwarded half
// a round trip after it arrived); a reset on either side resets the other.
//
//   catalyst-remote-delay-relay --rtt-ms MS --forward LISTEN=TARGET [...]
//   catalyst-remote-delay-relay --rtt-ms MS --transparent LISTEN
//
// --transparent serves connections that a netfilter REDIRECT rule diverted
// to LISTEN and connects each to its original destination (SO_ORIGINAL_DST);
// tools/netlab uses it so that clients keep using the real address.
//
// A chunk is held from when its last byte reached the socket (the kernel's
// receive timestamp), not from when the relay got round to reading it, so the
// relay's own wake-up latency does not add to the delay.
//
// One thread serves everything: epoll for the sockets, and one timerfd armed
// for the earliest pending release, early by the timer's typical lateness.
// The delay is the same for every chunk, so release times follow read order
// across all connections (to within the microseconds by which arrival and
// read order can differ) and a single FIFO of (time, connection, direction)
// is the timer queue. Each direction keeps its chunks in a FIFO too and only
// ever writes from its front, which preserves byte order. A direction stops
// reading while it holds --max-queue-kib bytes, which bounds memory and lets
// TCP flow control push back on the sender; the bound must exceed
// rate x RTT/2 to not limit throughput (4 MiB default: 33 Gbit/s at 2 ms).
//
// Prints on exit how far from their due time chunks left (waits for a full
// socket included, so bulk transfers through a slower link show large values).
//
//===----------------------------------------------------------------------===//

#include "NetUtil.h"

#include <csignal>
#include <cstdio>
#include <deque>
#include <limits.h>
#include <linux/netfilter_ipv4.h>
#include <memory>
#include <string>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unordered_map>
#include <vector>

using namespace catalyst::remote::tools;

namespace {

const char *Usage = "usage: catalyst-remote-delay-relay --rtt-ms MS (--forward LISTEN=TARGET |\n"
                    "                                   --transparent LISTEN)... [options]\n"
                    "\n"
                    "Relays TCP connections, holding the bytes of each direction for MS/2 ms.\n"
                    "  --forward LISTEN=TARGET  accept on LISTEN (HOST:PORT), connect to TARGET\n"
                    "  --transparent LISTEN     accept on LISTEN connections that a REDIRECT rule\n"
                    "                           sent there; connect to their original destination\n"
                    "  --max-queue-kib N        bytes held per direction before it stops reading\n"
                    "                           (default 4096)\n"
                    "  --compensate-us US       hold each direction (MS - US/1000)/2 instead:\n"
                    "                           US is what the relay's own hop adds to a round\n"
                    "                           trip, measured by the caller (default 0)\n"
                    "  --connections N          stop accepting after N connections; exit when\n"
                    "                           they are done\n"
                    "SIGINT or SIGTERM closes every connection and exits with status 0.\n";

constexpr size_t BlockSize = 256 << 10;
// Reads shorter than this are copied out so the block can take the next one.
constexpr size_t SmallChunk = 16 << 10;
constexpr size_t KeptBlocks = 64;
constexpr int MaxIov = 64;
// Timer lateness beyond this is the machine being busy, not the timer.
constexpr int64_t MaxLeadNs = 200000;

[[noreturn]] void fail(const std::string &Why) {
  std::fprintf(stderr, "catalyst-remote-delay-relay: %s\n", Why.c_str());
  std::exit(1);
}

struct Chunk {
  std::unique_ptr<char[]> Data;
  size_t Capacity = 0, Size = 0, Sent = 0;
  int64_t ReleaseNs = 0;
  bool Eof = false;
};

// Bytes flowing from one side of a connection to the other.
struct Direction {
  std::deque<Chunk> Queue;
  size_t QueuedBytes = 0;
  bool ReadDone = false;  // the source's end of stream is queued
  bool Shut = false;      // ... and was forwarded (shutdown of the sink)
  bool WantWrite = false; // released bytes wait for the sink to drain
};

// Side 0 is the accepted socket, side 1 the one the relay connected.
// Direction S reads from side S and writes to side 1 - S.
struct Connection {
  uint64_t Id = 0;
  int Fd[2] = {-1, -1};
  uint32_t Interest[2] = {0, 0};
  bool Registered[2] = {false, false};
  bool Connecting = true;
  Direction Dir[2];
};

struct Listener {
  int Fd = -1;
  SocketAddress Address;
  bool Transparent = false;
  SocketAddress Target;
};

// How far from its due time each chunk's first byte left, in microseconds
// from -EarlyUs to LateUs (the ends collect the rest); printed on exit.
class ReleaseErrors {
public:
  void add(int64_t ErrorNs) {
    int64_t Us = ErrorNs >= 0 ? ErrorNs / 1000 : -((-ErrorNs + 999) / 1000);
    Us = std::max<int64_t>(-EarlyUs, std::min<int64_t>(LateUs, Us));
    ++Counts[size_t(Us + EarlyUs)];
    ++Total;
  }
  // The error below which a fraction Q of the chunks left.
  int64_t quantile(double Q) const {
    uint64_t Want = uint64_t(Q * double(Total)), Seen = 0;
    for (size_t I = 0; I < Counts.size(); ++I)
      if ((Seen += Counts[I]) > Want)
        return int64_t(I) - EarlyUs;
    return LateUs;
  }
  uint64_t total() const { return Total; }

private:
  static constexpr int64_t EarlyUs = 1000, LateUs = 10000;
  std::vector<uint64_t> Counts = std::vector<uint64_t>(size_t(EarlyUs + LateUs + 1));
  uint64_t Total = 0;
};

struct Release {
  int64_t Ns;
  uint64_t Conn;
  int Dir;
};

// epoll tags: the low two bits say what the rest is.
enum Tag : uint64_t { SideClient = 0, SideUpstream = 1, ListenerTag = 2, ControlTag = 3 };
constexpr uint64_t TimerControl = 0, SignalControl = 1;

// When the bytes just read reached the socket: the kernel's receive timestamp
// of the last segment read (SO_TIMESTAMPNS, CLOCK_REALTIME) moved onto the
// monotonic clock, else now. Holding from arrival rather than from the read
// keeps the relay's own wake-up latency out of the added delay.
int64_t arrivalNs(const msghdr &M) {
  int64_t Now = nowNs();
  for (cmsghdr *C = CMSG_FIRSTHDR(&M); C; C = CMSG_NXTHDR(const_cast<msghdr *>(&M), C)) {
    if (C->cmsg_level != SOL_SOCKET || C->cmsg_type != SCM_TIMESTAMPNS)
      continue;
    timespec Rx, Real;
    std::memcpy(&Rx, CMSG_DATA(C), sizeof(Rx));
    ::clock_gettime(CLOCK_REALTIME, &Real);
    int64_t Age = (int64_t(Real.tv_sec) - Rx.tv_sec) * 1000000000 + (Real.tv_nsec - Rx.tv_nsec);
    // A clock step or a stale stamp: trust the read time instead.
    if (Age >= 0 && Age < 100000000)
      return Now - Age;
  }
  return Now;
}

class Relay {
public:
  Relay(std::vector<Listener> Ls, int64_t HalfRttNs, size_t MaxQueue, uint64_t MaxConnections)
      : Listeners(std::move(Ls)), HalfRttNs(HalfRttNs), MaxQueue(MaxQueue),
        MaxConnections(MaxConnections) {}
  int run();

private:
  void addFd(int Fd, uint64_t Tag, uint32_t Events);
  void acceptAll(Listener &L);
  void handle(Connection &C, int Side, uint32_t Events);
  bool readSide(Connection &C, int Side);
  bool flush(Connection &C, int D, int64_t Now);
  void updateInterest(Connection &C);
  void finishIfDone(Connection &C);
  void abort(Connection &C, const char *Why, int Err);
  void erase(Connection &C);
  void armTimer();
  void onTimer();
  // Bytes due before this time go out now: the timer is armed LeadNs early.
  int64_t horizon() const { return nowNs() + LeadNs; }
  void closeListeners();
  Chunk takeChunk(const char *Data, size_t N, std::unique_ptr<char[]> &Block);
  void recycle(Chunk &Ch);

  std::vector<Listener> Listeners;
  int64_t HalfRttNs;
  size_t MaxQueue;
  uint64_t MaxConnections;
  int Epoll = -1, Timer = -1, Signals = -1;
  int64_t ArmedNs = -1, ArmedAt = 0;
  // The timer is armed this much early: a running estimate of the median
  // of how late its wake-ups come, so that releases are centred on their due
  // time (half leave up to the timer's jitter early, half late).
  int64_t LeadNs = 0;
  uint64_t NextId = 1, Accepted = 0;
  bool Stopping = false;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> Conns;
  std::deque<Release> Timeline;
  std::vector<std::unique_ptr<char[]>> FreeBlocks;
  std::unique_ptr<char[]> Spare;
  uint64_t Relayed[2] = {0, 0};
  ReleaseErrors Errors;
};

void Relay::addFd(int Fd, uint64_t Tag, uint32_t Events) {
  epoll_event E{};
  E.events = Events;
  E.data.u64 = Tag;
  if (::epoll_ctl(Epoll, EPOLL_CTL_ADD, Fd, &E) != 0)
    fail(errnoText("epoll_ctl"));
}

void Relay::closeListeners() {
  for (auto &L : Listeners) {
    if (L.Fd >= 0)
      ::close(L.Fd);
    L.Fd = -1;
  }
}

void Relay::acceptAll(Listener &L) {
  while (L.Fd >= 0) {
    int Fd = ::accept4(L.Fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (Fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
        std::fprintf(stderr, "catalyst-remote-delay-relay: accept: %s\n", std::strerror(errno));
      return;
    }
    SocketAddress Target = L.Target;
    if (L.Transparent) {
      Target.Length = sizeof(sockaddr_in);
      if (::getsockopt(Fd, SOL_IP, SO_ORIGINAL_DST, Target.get(), &Target.Length) != 0) {
        std::fprintf(stderr, "catalyst-remote-delay-relay: no original destination: %s\n",
                     std::strerror(errno));
        ::close(Fd);
        continue;
      }
      // Not redirected: someone connected to the relay itself.
      if (formatAddress(Target) == formatAddress(localAddress(Fd))) {
        ::close(Fd);
        continue;
      }
    }
    int Up = ::socket(Target.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (Up < 0) {
      std::fprintf(stderr, "catalyst-remote-delay-relay: socket: %s\n", std::strerror(errno));
      ::close(Fd);
      continue;
    }
    int One = 1;
    for (int S : {Fd, Up}) {
      setNoDelay(S);
      // Without stamps arrivalNs() takes the read's time.
      ::setsockopt(S, SOL_SOCKET, SO_TIMESTAMPNS, &One, sizeof(One));
    }
    auto C = std::make_unique<Connection>();
    C->Id = NextId++;
    C->Fd[0] = Fd;
    C->Fd[1] = Up;
    int Rc = ::connect(Up, Target.get(), Target.Length);
    if (Rc != 0 && errno != EINPROGRESS) {
      std::fprintf(stderr, "catalyst-remote-delay-relay: cannot connect to %s: %s\n",
                   formatAddress(Target).c_str(), std::strerror(errno));
      ::close(Up);
      ::close(Fd);
      continue;
    }
    C->Connecting = Rc != 0;
    Connection &Ref = *C;
    Conns.emplace(C->Id, std::move(C));
    updateInterest(Ref);
    if (MaxConnections && ++Accepted >= MaxConnections) {
      closeListeners();
      return;
    }
  }
}

Chunk Relay::takeChunk(const char *Data, size_t N, std::unique_ptr<char[]> &Block) {
  Chunk Ch;
  if (N < SmallChunk) {
    Ch.Data.reset(new char[N]);
    std::memcpy(Ch.Data.get(), Data, N);
    Ch.Capacity = N;
  } else {
    Ch.Data = std::move(Block);
    Ch.Capacity = BlockSize;
  }
  Ch.Size = N;
  return Ch;
}

void Relay::recycle(Chunk &Ch) {
  if (Ch.Capacity == BlockSize && FreeBlocks.size() < KeptBlocks)
    FreeBlocks.push_back(std::move(Ch.Data));
}

// Reads what side Side has into its direction's queue. False when the
// connection was aborted.
bool Relay::readSide(Connection &C, int Side) {
  Direction &D = C.Dir[Side];
  while (!D.ReadDone && D.QueuedBytes < MaxQueue) {
    if (!Spare) {
      if (FreeBlocks.empty()) {
        Spare.reset(new char[BlockSize]);
      } else {
        Spare = std::move(FreeBlocks.back());
        FreeBlocks.pop_back();
      }
    }
    size_t Want = std::min(BlockSize, MaxQueue - D.QueuedBytes);
    iovec Iov{Spare.get(), Want};
    alignas(cmsghdr) char Control[CMSG_SPACE(sizeof(timespec))];
    msghdr M{};
    M.msg_iov = &Iov;
    M.msg_iovlen = 1;
    M.msg_control = Control;
    M.msg_controllen = sizeof(Control);
    ssize_t N = ::recvmsg(C.Fd[Side], &M, 0);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return true;
      abort(C, "read", errno);
      return false;
    }
    int64_t Release = arrivalNs(M) + HalfRttNs;
    Chunk Ch;
    if (N == 0) {
      Ch.Eof = true;
      D.ReadDone = true;
    } else {
      Ch = takeChunk(Spare.get(), size_t(N), Spare);
      D.QueuedBytes += size_t(N);
      Relayed[Side] += uint64_t(N);
    }
    Ch.ReleaseNs = Release;
    D.Queue.push_back(std::move(Ch));
    Timeline.push_back({Release, C.Id, Side});
    if (size_t(N) < Want)
      return true; // most likely drained; level-triggered epoll says if not
  }
  return true;
}

// Writes direction D's released bytes (and its end of stream) to its sink.
// False when the connection was aborted.
bool Relay::flush(Connection &C, int Dn, int64_t Now) {
  Direction &D = C.Dir[Dn];
  int Sink = C.Fd[1 - Dn];
  if (Dn == 0 && C.Connecting)
    return true;
  D.WantWrite = false;
  int64_t Actual = nowNs();
  while (!D.Queue.empty() && D.Queue.front().ReleaseNs <= Now) {
    if (D.Queue.front().Eof) {
      // Fails only on a connection already ended, whose end the relay sees next.
      ::shutdown(Sink, SHUT_WR);
      D.Shut = true;
      D.Queue.pop_front();
      continue;
    }
    iovec Iov[MaxIov];
    int N = 0;
    size_t Total = 0;
    for (auto It = D.Queue.begin();
         N < MaxIov && It != D.Queue.end() && !It->Eof && It->ReleaseNs <= Now; ++It, ++N) {
      Iov[N].iov_base = It->Data.get() + It->Sent;
      Iov[N].iov_len = It->Size - It->Sent;
      Total += Iov[N].iov_len;
    }
    msghdr M{};
    M.msg_iov = Iov;
    M.msg_iovlen = size_t(N);
    ssize_t W = ::sendmsg(Sink, &M, MSG_NOSIGNAL);
    if (W < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        D.WantWrite = true;
        return true;
      }
      abort(C, "write", errno);
      return false;
    }
    size_t Left = size_t(W);
    D.QueuedBytes -= Left;
    while (Left > 0) {
      Chunk &Front = D.Queue.front();
      size_t Take = std::min(Left, Front.Size - Front.Sent);
      if (Front.Sent == 0)
        Errors.add(Actual - Front.ReleaseNs);
      Front.Sent += Take;
      Left -= Take;
      if (Front.Sent == Front.Size) {
        recycle(Front);
        D.Queue.pop_front();
      }
    }
    if (size_t(W) < Total) {
      D.WantWrite = true;
      return true;
    }
  }
  return true;
}

void Relay::updateInterest(Connection &C) {
  for (int S = 0; S < 2; ++S) {
    uint32_t Want = 0;
    const Direction &In = C.Dir[S], &Out = C.Dir[1 - S];
    bool Usable = S == 0 || !C.Connecting;
    if (Usable && !In.ReadDone && In.QueuedBytes < MaxQueue)
      Want |= EPOLLIN | EPOLLRDHUP;
    if ((S == 1 && C.Connecting) || Out.WantWrite)
      Want |= EPOLLOUT;
    // A socket with nothing to wait for leaves the set: a hung-up socket
    // would otherwise report EPOLLHUP on every wait.
    if (Want == C.Interest[S] && (Want != 0) == C.Registered[S])
      continue;
    epoll_event E{};
    E.events = Want;
    E.data.u64 = (C.Id << 2) | uint64_t(S);
    int Op = Want == 0 ? EPOLL_CTL_DEL : C.Registered[S] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (::epoll_ctl(Epoll, Op, C.Fd[S], &E) != 0)
      fail(errnoText("epoll_ctl"));
    C.Registered[S] = Want != 0;
    C.Interest[S] = Want;
  }
}

void Relay::erase(Connection &C) {
  for (int S = 0; S < 2; ++S)
    ::close(C.Fd[S]); // closing also drops it from the epoll set
  for (auto &D : C.Dir)
    for (auto &Ch : D.Queue)
      recycle(Ch);
  Conns.erase(C.Id);
}

void Relay::finishIfDone(Connection &C) {
  if (C.Dir[0].Shut && C.Dir[1].Shut)
    erase(C);
  else
    updateInterest(C);
}

// Ends both sides with a reset, as the failure of one would end a real path.
void Relay::abort(Connection &C, const char *Why, int Err) {
  if (Err != ECONNRESET && Err != EPIPE)
    std::fprintf(stderr, "catalyst-remote-delay-relay: connection %llu: %s: %s\n",
                 (unsigned long long)C.Id, Why, std::strerror(Err));
  linger Hard{1, 0};
  for (int S = 0; S < 2; ++S)
    // Refused, the close below ends the connection gracefully instead.
    ::setsockopt(C.Fd[S], SOL_SOCKET, SO_LINGER, &Hard, sizeof(Hard));
  erase(C);
}

void Relay::handle(Connection &C, int Side, uint32_t Events) {
  if (Side == 1 && C.Connecting) {
    if (!(Events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
      return;
    int Err = 0;
    socklen_t Len = sizeof(Err);
    ::getsockopt(C.Fd[1], SOL_SOCKET, SO_ERROR, &Err, &Len);
    if (Err != 0) {
      abort(C, "connect", Err);
      return;
    }
    C.Connecting = false;
    if (!flush(C, 0, horizon()))
      return;
    finishIfDone(C);
    return;
  }
  if (Events & EPOLLERR) {
    int Err = 0;
    socklen_t Len = sizeof(Err);
    ::getsockopt(C.Fd[Side], SOL_SOCKET, SO_ERROR, &Err, &Len);
    abort(C, "socket", Err ? Err : ECONNRESET);
    return;
  }
  if ((Events & EPOLLOUT) && C.Dir[1 - Side].WantWrite && !flush(C, 1 - Side, horizon()))
    return;
  if ((Events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) && !readSide(C, Side))
    return;
  // Without a delay (or after a long wait to be read) bytes are due already.
  const Direction &D = C.Dir[Side];
  if (!D.Queue.empty() && D.Queue.front().ReleaseNs <= horizon() && !flush(C, Side, horizon()))
    return;
  finishIfDone(C);
}

void Relay::armTimer() {
  int64_t Want = Timeline.empty() ? 0 : std::max<int64_t>(1, Timeline.front().Ns - LeadNs);
  if (Want == ArmedNs)
    return;
  itimerspec T{};
  T.it_value.tv_sec = Want / 1000000000;
  T.it_value.tv_nsec = Want % 1000000000;
  if (Want == 0) // disarm; an absolute time of 0 would do the same
    T.it_value.tv_nsec = 0;
  if (::timerfd_settime(Timer, TFD_TIMER_ABSTIME, &T, nullptr) != 0)
    fail(errnoText("timerfd_settime"));
  ArmedNs = Want;
  ArmedAt = nowNs();
}

void Relay::onTimer() {
  uint64_t Expirations;
  [[maybe_unused]] ssize_t N = ::read(Timer, &Expirations, sizeof(Expirations));
  int64_t Now = nowNs();
  if (ArmedNs > 0) {
    // A time already past when armed says nothing about the timer.
    int64_t Late = Now - std::max(ArmedNs, ArmedAt);
    // Equal steps down and up settle where half the wake-ups are earlier
    // than the estimate.
    if (Late >= 0 && Late < LeadNs)
      LeadNs = std::max<int64_t>(0, LeadNs - 500);
    else if (Late >= LeadNs && LeadNs + 500 <= MaxLeadNs)
      LeadNs += 500;
  }
  ArmedNs = -1;
  Now += LeadNs;
  while (!Timeline.empty() && Timeline.front().Ns <= Now) {
    Release R = Timeline.front();
    Timeline.pop_front();
    auto It = Conns.find(R.Conn);
    if (It == Conns.end())
      continue;
    Connection &C = *It->second;
    if (flush(C, R.Dir, Now))
      finishIfDone(C);
  }
}

int Relay::run() {
  // Timers fire within a microsecond or so of their time instead of the
  // default 50 us slack.
  // Refused, timers keep the default slack: later, never wrong.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  sigset_t Mask;
  sigemptyset(&Mask);
  sigaddset(&Mask, SIGINT);
  sigaddset(&Mask, SIGTERM);
  sigaddset(&Mask, SIGHUP);
  // Cannot fail: SIG_BLOCK with a valid set.
  ::sigprocmask(SIG_BLOCK, &Mask, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  Epoll = ::epoll_create1(EPOLL_CLOEXEC);
  Timer = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  Signals = ::signalfd(-1, &Mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (Epoll < 0 || Timer < 0 || Signals < 0)
    fail(errnoText("epoll/timerfd/signalfd"));
  addFd(Timer, (TimerControl << 2) | ControlTag, EPOLLIN);
  addFd(Signals, (SignalControl << 2) | ControlTag, EPOLLIN);
  for (size_t I = 0; I < Listeners.size(); ++I)
    addFd(Listeners[I].Fd, (uint64_t(I) << 2) | ListenerTag, EPOLLIN);

  epoll_event Events[64];
  while (!Stopping) {
    bool Draining = MaxConnections && Accepted >= MaxConnections;
    if (Draining && Conns.empty())
      break;
    armTimer();
    int N = ::epoll_wait(Epoll, Events, 64, -1);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      fail(errnoText("epoll_wait"));
    for (int I = 0; I < N && !Stopping; ++I) {
      uint64_t Tag = Events[I].data.u64, Value = Tag >> 2;
      switch (Tag & 3) {
      case ControlTag:
        if (Value == TimerControl)
          onTimer();
        else
          Stopping = true;
        break;
      case ListenerTag:
        acceptAll(Listeners[Value]);
        break;
      default: {
        // The connection may have gone while handling an earlier event.
        auto It = Conns.find(Value);
        if (It != Conns.end())
          handle(*It->second, int(Tag & 3), Events[I].events);
      }
      }
    }
  }
  closeListeners();
  while (!Conns.empty())
    erase(*Conns.begin()->second);
  std::fprintf(stderr,
               "catalyst-remote-delay-relay: exiting; relayed %llu bytes from clients, "
               "%llu to them, over %llu connections\n",
               (unsigned long long)Relayed[0], (unsigned long long)Relayed[1],
               (unsigned long long)(NextId - 1));
  if (Errors.total() > 0)
    std::fprintf(
        stderr,
        "catalyst-remote-delay-relay: %llu chunks left after their due time (waits for a full "
        "socket included) by "
        "p10 %lld us, median %lld us, p90 %lld us, p99 %lld us (timer lead %lld us)\n",
        (unsigned long long)Errors.total(), (long long)Errors.quantile(0.1),
        (long long)Errors.quantile(0.5), (long long)Errors.quantile(0.9),
        (long long)Errors.quantile(0.99), (long long)(LeadNs / 1000));
  return 0;
}

[[noreturn]] void usageError(const std::string &Why) {
  std::fprintf(stderr, "catalyst-remote-delay-relay: %s\n%s", Why.c_str(), Usage);
  std::exit(2);
}

bool parseCount(const char *Text, uint64_t &Out) {
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(Text, &End, 10);
  Out = V;
  return errno == 0 && End != Text && *End == 0;
}

} // namespace

int main(int Argc, char **Argv) {
  double RttMs = -1, CompensateUs = 0;
  uint64_t MaxQueueKiB = 4096, Connections = 0;
  std::vector<Listener> Listeners;
  std::vector<std::string> Shown;
  for (int I = 1; I < Argc; ++I) {
    std::string Flag = Argv[I];
    bool HasValue = I + 1 < Argc;
    if (Flag == "--help" || Flag == "-h") {
      std::fputs(Usage, stdout);
      return 0;
    }
    std::string Error;
    if (Flag == "--rtt-ms" && HasValue) {
      char *End = nullptr;
      RttMs = std::strtod(Argv[++I], &End);
      if (*End != 0 || !(RttMs >= 0 && RttMs <= 10000))
        usageError("bad --rtt-ms");
    } else if (Flag == "--compensate-us" && HasValue) {
      char *End = nullptr;
      CompensateUs = std::strtod(Argv[++I], &End);
      if (*End != 0 || !(CompensateUs >= 0 && CompensateUs <= 1e7))
        usageError("bad --compensate-us");
    } else if (Flag == "--forward" && HasValue) {
      std::string Spec = Argv[++I];
      size_t Eq = Spec.find('=');
      Listener L;
      if (Eq == std::string::npos)
        usageError("--forward takes LISTEN=TARGET");
      if (!parseAddress(Spec.substr(0, Eq), L.Address, Error) ||
          !parseAddress(Spec.substr(Eq + 1), L.Target, Error))
        usageError(Error);
      Listeners.push_back(L);
      Shown.push_back(formatAddress(L.Target));
    } else if (Flag == "--transparent" && HasValue) {
      Listener L;
      L.Transparent = true;
      if (!parseAddress(Argv[++I], L.Address, Error))
        usageError(Error);
      if (L.Address.family() != AF_INET)
        usageError("--transparent supports IPv4 only");
      Listeners.push_back(L);
      Shown.push_back("original destination");
    } else if (Flag == "--max-queue-kib" && HasValue) {
      if (!parseCount(Argv[++I], MaxQueueKiB) || MaxQueueKiB == 0 || MaxQueueKiB > (1 << 22))
        usageError("bad --max-queue-kib");
    } else if (Flag == "--connections" && HasValue) {
      if (!parseCount(Argv[++I], Connections))
        usageError("bad --connections");
    } else {
      usageError("bad argument '" + Flag + "'");
    }
  }
  if (RttMs < 0)
    usageError("--rtt-ms is required");
  if (Listeners.empty())
    usageError("give at least one --forward or --transparent");
  int64_t HalfRttNs = std::max<int64_t>(0, int64_t((RttMs * 1e6 - CompensateUs * 1e3) / 2));
  for (size_t I = 0; I < Listeners.size(); ++I) {
    std::string Error;
    Listeners[I].Fd = listenOn(Listeners[I].Address, SOCK_NONBLOCK, Error);
    if (Listeners[I].Fd < 0)
      fail(Error);
    std::printf("catalyst-remote-delay-relay: listening on %s (to %s), rtt +%g ms, "
                "holding %.1f us each way\n",
                formatAddress(localAddress(Listeners[I].Fd)).c_str(), Shown[I].c_str(), RttMs,
                double(HalfRttNs) / 1e3);
  }
  std::fflush(stdout);
  Relay R(std::move(Listeners), HalfRttNs, size_t(MaxQueueKiB) << 10, Connections);
  return R.run();
}
