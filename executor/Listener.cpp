//===- Listener.cpp - Accepting hosts, one process per connection ---------===//

#include "Listener.h"

#include "Announcement.h"
#include "Assets.h"
#include "Log.h"
#include "ParentWatch.h"
#include "PmixAnnouncement.h"
#include "RefusalLog.h"
#include "SrunWatch.h"
#include "wire/Handshake.h"
#include "wire/HangupKind.h"
#include "wire/HostChallenge.h"
#include "wire/Keepalive.h"
#include "wire/LocalOffer.h"
#include "wire/SendMark.h"
#include "wire/SocketFile.h"
#include "wire/SysError.h"
#include "wire/UnixSocket.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <list>
#include <map>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <new>
#include <openssl/crypto.h>
#include <optional>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::executor {

namespace {

// SIGHUP: Catalyst's launcher starts a remote executor through `ssh -tt`,
// and stops it by closing that session.
constexpr int StopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// What the listener's signal handler reads and writes, and the mask its
// wait takes signals with: process-wide, because a handler is given no
// object, and runs on whatever the process was doing.
struct ListenerSignals {
  // The self-pipe: the handler writes a byte and the wait wakes on it.
  // Connection processes write it too (ConnectionOptions::AdmittedFd), and
  // PMIx's watch of its server.
  int WakeFds[2] = {-1, -1};
  // Set by a stop signal; the loop ends once it sees it.
  volatile sig_atomic_t StopRequested = 0;
  // The listener blocks the stop signals and SIGCHLD while it works, and
  // takes them only inside ppoll() with this, the mask it started with. A
  // signal then always finds the loop waiting, never between its check of
  // StopRequested and its wait; and under ThreadSanitizer, which defers a
  // handler to the interrupted thread's next intercepted call, it is never
  // deferred past the wait. Forked connection processes and spawned tools
  // get this mask back.
  sigset_t WaitMask;
};
ListenerSignals Signals;

void onSignal(int Sig) {
  // The announcement first: a launcher may SIGKILL the executor soon.
  if (Sig != SIGCHLD) {
    withdrawAnnouncement();
    Signals.StopRequested = 1;
  }
  int Saved = errno;
  [[maybe_unused]] ssize_t N = ::write(Signals.WakeFds[1], "x", 1);
  errno = Saved;
}

Error bindError(StringRef Spec, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "cannot listen on " + Spec + ": " + Why);
}

std::string numericAddress(const sockaddr *A, socklen_t Len) {
  if (A->sa_family == AF_UNIX)
    return "a local process";
  char Host[NI_MAXHOST], Port[NI_MAXSERV];
  if (::getnameinfo(A, Len, Host, sizeof(Host), Port, sizeof(Port),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  bool V6 = A->sa_family == AF_INET6;
  return (V6 ? "[" : "") + std::string(Host) + (V6 ? "]:" : ":") + Port;
}

// Whom a peer counts against in the startup budget: its address without
// the port; every local process as one.
std::string sourceOf(const sockaddr_storage &A, socklen_t Len) {
  if (A.ss_family == AF_UNIX)
    return "local processes";
  char Host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<const sockaddr *>(&A), Len, Host, sizeof(Host), nullptr, 0,
                    NI_NUMERICHOST) != 0)
    return "?";
  return Host;
}

std::string boundAddress(int Fd) {
  sockaddr_storage A{};
  socklen_t Len = sizeof(A);
  ::getsockname(Fd, reinterpret_cast<sockaddr *>(&A), &Len);
  return numericAddress(reinterpret_cast<sockaddr *>(&A), Len);
}

void splitSpec(StringRef Spec, std::string &Host, std::string &Port) {
  if (Spec.consume_front("[")) {
    auto Close = Spec.find(']');
    Host = Spec.take_front(Close).str();
    Port = Spec.drop_front(Close + 1).drop_front(1).str();
    return;
  }
  auto Colon = Spec.rfind(':');
  Host = Colon == StringRef::npos ? "" : Spec.take_front(Colon).str();
  Port = Colon == StringRef::npos ? Spec.str() : Spec.drop_front(Colon + 1).str();
  if (Host.empty())
    Host = "127.0.0.1";
}

} // namespace

Expected<Listener> listenOn(StringRef Spec) {
  if (auto Path = wire::socketFilePath(Spec)) {
    Listener L;
    auto Fd = wire::listenAtPath(*Path, L.File);
    if (!Fd)
      return Fd.takeError();
    L.Fd = *Fd;
    L.Address = (wire::UnixScheme + L.File.Path).str();
    return L;
  }
  std::string Host, Port;
  splitSpec(Spec, Host, Port);
  if (Port.empty() || Port.find_first_not_of("0123456789") != std::string::npos)
    return bindError(Spec, "expected HOST:PORT or PORT");
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  Hints.ai_flags = AI_PASSIVE;
  addrinfo *AI = nullptr;
  if (int Rc = ::getaddrinfo(Host.c_str(), Port.c_str(), &Hints, &AI))
    return bindError(Spec, ::gai_strerror(Rc));
  int Fd = ::socket(AI->ai_family, AI->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, AI->ai_protocol);
  int One = 1;
  int Err = Fd < 0 ? errno : 0;
  if (!Err && (::setsockopt(Fd, SOL_SOCKET, SO_REUSEADDR, &One, sizeof(One)) != 0 ||
               ::bind(Fd, AI->ai_addr, AI->ai_addrlen) != 0 || ::listen(Fd, SOMAXCONN) != 0))
    Err = errno;
  ::freeaddrinfo(AI);
  if (Err) {
    if (Fd >= 0)
      ::close(Fd);
    return bindError(Spec, std::strerror(Err));
  }
  return Listener{Fd, boundAddress(Fd), {}};
}

bool isLoopback(const Listener &L) {
  sockaddr_storage A{};
  socklen_t Len = sizeof(A);
  if (::getsockname(L.Fd, reinterpret_cast<sockaddr *>(&A), &Len) != 0)
    return false;
  if (A.ss_family == AF_UNIX)
    return true;
  if (A.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<sockaddr_in &>(A).sin_addr.s_addr) >> 24) == 127;
  if (A.ss_family != AF_INET6)
    return false;
  const in6_addr &V6 = reinterpret_cast<sockaddr_in6 &>(A).sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&V6) || (IN6_IS_ADDR_V4MAPPED(&V6) && V6.s6_addr[12] == 127);
}

namespace {

using Clock = std::chrono::steady_clock;

// The listener's own state, all of it owned by its one thread.
//
// A connection process, with the listener's own copy of its socket (kept
// to tell the host why the process died, when it could not) and the record
// it shares with it. Until its peer is admitted (Record->Admitted: without
// a token, its first message arrived) it counts as a startup from Source,
// and is ended at Deadline.
struct Child {
  int Fd;
  ConnectionRecord *Record;
  std::string Source, Peer, Via;
  Clock::time_point Deadline;
  bool Starting = false; // counted in Budget
  bool Expired = false;  // ended for its deadline
};
std::map<pid_t, Child> Children;

// A peer challenged to authenticate (with a token), before any fork.
struct Startup {
  int Fd;
  std::string Source, Peer, Via;
  Clock::time_point Deadline;
  wire::HostChallenge Challenge;
};
std::list<Startup> Pending;

// While accept() fails for want of descriptors, the listeners are not
// polled until AcceptPausedUntil.
constexpr std::chrono::milliseconds AcceptPause{100};
Clock::time_point AcceptPausedUntil;

std::optional<Startups> Budget;
RefusalLog Refusals;
std::chrono::milliseconds HandshakeTimeout;

ConnectionRecord *newRecord() {
  void *P = ::mmap(nullptr, sizeof(ConnectionRecord), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return P == MAP_FAILED ? nullptr : new (P) ConnectionRecord();
}

// Closing a socket with unread bytes resets the connection, and a reset
// can make the host drop what it had not read yet: the reason it was just
// sent. So what is left unread (a request the dead process never took) goes
// first, and the close is an orderly one.
void release(int Fd, ConnectionRecord *Record) {
  char Sink[4096];
  for (int I = 0; I < 256 && ::recv(Fd, Sink, sizeof(Sink), MSG_DONTWAIT) > 0; ++I) {
  }
  ::close(Fd);
  Record->~ConnectionRecord();
  // The record's own mapping, whole: munmap cannot refuse it.
  ::munmap(Record, sizeof(ConnectionRecord));
}

bool killed(const siginfo_t &End) {
  return End.si_code != CLD_EXITED;
}

std::string deathOf(const siginfo_t &End) {
  std::string Who = "the executor's connection process " + std::to_string(End.si_pid);
  if (killed(End))
    return Who + " was killed by signal " + std::to_string(End.si_status) + " (" +
           ::strsignal(End.si_status) + ")";
  return Who + " exited with status " + std::to_string(End.si_status) +
         " while serving its session (as when a kernel calls exit() or _exit())";
}

// "1.5" for 1500 ms (raw_ostream would write a double as 1.500000e+00).
std::string secondsText(std::chrono::milliseconds D) {
  char Seconds[32];
  std::snprintf(Seconds, sizeof(Seconds), "%g", D.count() / 1000.0);
  return Seconds;
}

std::string tooSlow() {
  return "nothing usable within the executor's handshake timeout of " +
         secondsText(HandshakeTimeout) + " s (--handshake-timeout)";
}

// A process that died without ending its session could not tell its host
// why: the listener does, unless the process died in the middle of a
// message (a frame now would be read as its rest) or its crash reporter
// already took the connection (its mark then never ends).
void reportDeath(const siginfo_t &End, const Child &C) {
  if (C.Record->Ended || !wire::endsBetweenMessages(C.Fd, C.Record->Sending))
    return;
  wire::refuseConnection(C.Fd, C.Expired ? tooSlow() : deathOf(End));
}

void logExit(const siginfo_t &End) {
  if (killed(End))
    LogLine() << "catalyst-remote-executor: connection process " << End.si_pid
              << " was killed by signal " << End.si_status << " (" << ::strsignal(End.si_status)
              << ")";
  else if (End.si_status != 0)
    LogLine() << "catalyst-remote-executor: connection process " << End.si_pid
              << " exited with status " << End.si_status;
}

// A process whose peer was never admitted ends in the refusal summary,
// not a log line of its own.
void noteNeverAdmitted(const siginfo_t &End, const Child &C) {
  auto Kind = C.Expired                                        ? RefusalLog::Kind::Silent
              : !killed(End) && End.si_status == NeverAdmitted ? RefusalLog::Kind::Malformed
                                                               : RefusalLog::Kind::Left;
  Refusals.note(Kind, C.Source,
                "refused " + C.Peer + " on " + C.Via + ": " +
                    (C.Expired ? "its first message did not arrive in time"
                               : "it left or sent no usable first message"));
}

void logServed(const Child &C, pid_t Pid) {
  LogLine() << "catalyst-remote-executor: " << C.Peer << " connected to " << C.Via
            << ", served by process " << Pid;
}

// A process reaped before the listener saw its peer admitted: a session
// that was short, a peer that left without a word (a host that moved to
// the local socket does, so it goes unlogged), or one refused.
void forget(const siginfo_t &End, pid_t Pid, const Child &C) {
  if (!C.Starting)
    return logExit(End);
  Budget->done(C.Source);
  if (C.Record->Admitted) {
    logServed(C, Pid);
    logExit(End);
  } else if (C.Expired || killed(End) || End.si_status != 0) {
    noteNeverAdmitted(End, C);
  }
}

// Reaps the connection processes that have ended; with Block, waits for one.
// A process is reaped only once all is said and done for it (its host told,
// its socket and assets released): whoever watches it vanish can count on
// that.
void reapChildren(bool Block = false) {
  siginfo_t End{};
  int Flags = WEXITED | WNOWAIT | (Block ? 0 : WNOHANG);
  int Got;
  while ((Got = ::waitid(P_ALL, 0, &End, Flags)) == 0 && End.si_pid > 0) {
    Flags |= WNOHANG;
    if (auto It = Children.find(End.si_pid); It != Children.end()) {
      reportDeath(End, It->second);
      forget(End, End.si_pid, It->second);
      release(It->second.Fd, It->second.Record);
      Children.erase(It);
    } else {
      logExit(End);
    }
    // A connection process that crashed could not remove its own assets.
    removeAssets(End.si_pid);
    ::waitpid(End.si_pid, nullptr, 0);
    End = siginfo_t{};
  }
  if (Got < 0 && errno == ECHILD) {
    for (auto &[P, C] : Children)
      release(C.Fd, C.Record);
    Children.clear();
  }
}

// A connection whose session ended, or whose host hung up (one that moved
// to the local socket, and now holds a connection there), is on its way
// out: it is not served any more.
bool over(const Child &C) {
  pollfd P{C.Fd, POLLRDHUP, 0};
  return C.Record->Ended || (::poll(&P, 1, 0) > 0 && (P.revents & (POLLRDHUP | POLLHUP | POLLERR)));
}

size_t servedNow() {
  size_t N = 0;
  for (auto &[Pid, C] : Children)
    N += C.Record->Admitted && !over(C);
  return N;
}

// Without a token: children whose peers were admitted since the last look
// become sessions; those past their deadline are ended.
void checkStartingChildren(Clock::time_point Now) {
  for (auto &[Pid, C] : Children) {
    if (!C.Starting)
      continue;
    if (C.Record->Admitted) {
      C.Starting = false;
      Budget->done(C.Source);
      logServed(C, Pid);
    } else if (Now >= C.Deadline && !C.Expired) {
      C.Expired = true;
      // Fails only for a process already gone, which the reaper then sees.
      ::kill(Pid, SIGKILL);
    }
  }
}

[[noreturn]] void runChild(int Conn, const std::string &Peer, std::vector<Listener> &Listeners,
                           const ConnectionOptions &Options, ConnectionWire &Wire,
                           ConnectionRecord &Record) {
  // Cannot fail: a valid signal.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  for (int S : StopSignals)
    std::signal(S, SIG_DFL);
  // Cannot fail, nor the ones above: the defaults of signals that have one.
  std::signal(SIGCHLD, SIG_DFL);
  // Cannot fail: a mask this process had.
  ::pthread_sigmask(SIG_SETMASK, &Signals.WaitMask, nullptr);
  for (auto &L : Listeners)
    ::close(L.Fd);
  // The write end stays: it tells the listener the peer was admitted
  // (ConnectionOptions::AdmittedFd).
  ::close(Signals.WakeFds[0]);
  // Other hosts' connections: holding them would keep them open past their
  // own processes.
  for (auto &[P, C] : Children)
    ::close(C.Fd);
  // Other peers still authenticating; this one among them, when it just
  // proved itself, is kept.
  for (auto &S : Pending)
    if (S.Fd != Conn)
      ::close(S.Fd);
  // A local socket has no delayed acknowledgements to avoid, and its peer's
  // end closes with its process.
  if (!wire::isUnixSocket(Conn)) {
    int One = 1;
    Error Err = ::setsockopt(Conn, IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One)) == 0
                    ? wire::enableKeepalive(Conn)
                    : wire::sysError("setting TCP_NODELAY", errno);
    // Served all the same, as it was before the options: said, not fatal.
    if (Err)
      LogLine() << "catalyst-remote-executor: the connection of " << Peer
                << " is served without its socket options: " << toString(std::move(Err));
  }
  ::_exit(serveConnection(Conn, Peer, Options, Wire, Record));
}

struct Arrival {
  int Fd;
  std::string Source, Peer, Via;
  ConnectionWire Wire; // set once the peer proved itself
};

// Forks the process that serves a peer; Admitted when it authenticated.
void spawn(Arrival A, bool Admitted, std::vector<Listener> &All, const ServeOptions &Options) {
  ConnectionRecord *Record = newRecord();
  if (Record)
    Record->Admitted = Admitted;
  pid_t Pid = Record ? ::fork() : -1;
  if (Pid == 0)
    runChild(A.Fd, A.Peer, All, Options.Connection, A.Wire, *Record);
  // The key is the connection process's alone.
  ::OPENSSL_cleanse(A.Wire.Key.data(), A.Wire.Key.size());
  if (Pid < 0) {
    Refusals.note(RefusalLog::Kind::Other, A.Source,
                  "cannot fork for " + A.Peer + ": " + std::strerror(errno));
    if (!Admitted)
      Budget->done(A.Source);
    if (Record)
      release(A.Fd, Record);
    else
      ::close(A.Fd);
    return;
  }
  Child C{A.Fd, Record, A.Source, A.Peer, A.Via, Clock::now() + HandshakeTimeout};
  C.Starting = !Admitted;
  if (Admitted)
    logServed(C, Pid);
  Children.emplace(Pid, std::move(C));
}

void refuse(const Arrival &A, RefusalLog::Kind K, const std::string &Why) {
  wire::refuseConnection(A.Fd, Why);
  ::close(A.Fd);
  Refusals.note(K, A.Source, "refused " + A.Peer + " on " + A.Via + ": " + Why);
}

bool atCapacity(const Arrival &A, const ServeOptions &Options) {
  // A connection that just ended may not have been reaped yet (its SIGCHLD
  // can arrive after this wake-up): it no longer counts.
  reapChildren();
  if (servedNow() < Options.MaxConnections)
    return false;
  refuse(A, RefusalLog::Kind::AtCapacity,
         wire::CapacityRefusal.str() + std::to_string(Options.MaxConnections) +
             " sessions (--max-connections)");
  return true;
}

// With a token: challenges the peer from the listener; it gets a process
// once it has proven itself (advanceStartup).
// Sessions over TCP carry their bytes as --wire says; those over a socket
// file or the local socket stay plain.
void challenge(Arrival A, wire::WireMode TcpWire) {
  wire::Nonce Nonce{};
  Error Err = wire::drawNonce(Nonce);
  auto Wire = wire::isUnixSocket(A.Fd) ? wire::WireMode::Plain : TcpWire;
  Startup S{A.Fd,
            A.Source,
            A.Peer,
            A.Via,
            Clock::now() + HandshakeTimeout,
            wire::HostChallenge(Nonce, Wire)};
  if (!Err)
    Err = S.Challenge.start(A.Fd);
  if (Err) {
    Budget->done(A.Source);
    ::close(A.Fd);
    Refusals.note(RefusalLog::Kind::Other, A.Source,
                  "refused " + A.Peer + ": " + toString(std::move(Err)));
    return;
  }
  Pending.push_back(std::move(S));
}

Arrival arrival(int Conn, const sockaddr_storage &Peer, socklen_t Len, const Listener &L) {
  Arrival A{Conn,
            sourceOf(Peer, Len),
            numericAddress(reinterpret_cast<const sockaddr *>(&Peer), Len),
            L.Address,
            {}};
  if (Peer.ss_family == AF_UNIX) {
    pid_t Pid = wire::peerOf(Conn).Pid;
    A.Peer = "local process " + std::to_string(Pid);
  }
  return A;
}

// Takes one connection from L's queue; false when it was empty.
bool acceptOne(Listener &L, std::vector<Listener> &All, const ServeOptions &Options) {
  sockaddr_storage Peer{};
  socklen_t Len = sizeof(Peer);
  int Conn = ::accept4(L.Fd, reinterpret_cast<sockaddr *>(&Peer), &Len, SOCK_CLOEXEC);
  if (Conn < 0) {
    int Errno = errno;
    if (Errno == EINTR || Errno == ECONNABORTED)
      return true;
    if (Errno != EAGAIN) {
      // Out of descriptors or memory: the queue stays readable, so the
      // listener looks away from it for a moment rather than spin.
      AcceptPausedUntil = Clock::now() + AcceptPause;
      Refusals.note(RefusalLog::Kind::Other, "?",
                    "accept on " + L.Address + " failed: " + std::strerror(Errno));
    }
    return false;
  }
  Arrival A = arrival(Conn, Peer, Len, L);
  // A socket file's mode keeps other users out, but not root.
  if (!L.File.Path.empty())
    if (auto Err = wire::checkPeerUser(Conn)) {
      refuse(A, RefusalLog::Kind::OtherUser,
             wire::OtherUserRefusal.str() + toString(std::move(Err)));
      return true;
    }
  bool Token = !Options.Connection.Secret.empty();
  // Without a token a session starts here, so its limit is checked here.
  if (!Token && atCapacity(A, Options))
    return true;
  if (auto V = Budget->admit(A.Source); V != Startups::Verdict::Admit) {
    refuse(A, RefusalLog::Kind::OverBudget, busyReason(V));
    return true;
  }
  if (Token)
    challenge(std::move(A), Options.Connection.Wire);
  else
    spawn(std::move(A), /*Admitted=*/false, All, Options);
  return true;
}

// A host that proved itself gets the executor's proof, the key of its TLS
// stream when its session has one, and a process.
void admit(Arrival A, const wire::HostChallenge &C, std::vector<Listener> &All,
           const ServeOptions &Options) {
  StringRef Secret = Options.Connection.Secret.reveal();
  Expected<wire::Psk> Key = wire::Psk{};
  if (C.wire() == wire::WireMode::Tls)
    Key = C.sessionKey(Secret);
  if (!Key || !C.sendProof(A.Fd, Secret)) {
    Refusals.note(Key ? RefusalLog::Kind::Left : RefusalLog::Kind::Other, A.Source,
                  "refused " + A.Peer + " on " + A.Via + ": " +
                      (Key ? std::string(wire::describe(wire::HostChallenge::Outcome::Left))
                           : toString(Key.takeError())));
    ::close(A.Fd);
    return;
  }
  A.Wire.Tls = C.wire() == wire::WireMode::Tls;
  A.Wire.Key = *Key;
  ::OPENSSL_cleanse(Key->data(), Key->size());
  spawn(std::move(A), /*Admitted=*/true, All, Options);
}

// Moves a challenged peer along; true when it is done with (forked,
// refused or gone).
bool advanceStartup(Startup &S, std::vector<Listener> &All, const ServeOptions &Options) {
  auto Outcome = S.Challenge.advance(S.Fd, Options.Connection.Secret.reveal());
  if (Outcome == wire::HostChallenge::Outcome::Waiting)
    return false;
  Budget->done(S.Source);
  Arrival A{S.Fd, S.Source, S.Peer, S.Via, {}};
  if (Outcome == wire::HostChallenge::Outcome::Proven) {
    if (!atCapacity(A, Options))
      admit(std::move(A), S.Challenge, All, Options);
    return true;
  }
  ::close(S.Fd);
  using O = wire::HostChallenge::Outcome;
  auto Kind = Outcome == O::Left           ? RefusalLog::Kind::Left
              : Outcome == O::Malformed    ? RefusalLog::Kind::Malformed
              : Outcome == O::WireMismatch ? RefusalLog::Kind::WireMismatch
                                           : RefusalLog::Kind::WrongProof;
  Refusals.note(Kind, S.Source,
                "refused " + S.Peer + " on " + S.Via + ": " + wire::describe(Outcome));
  return true;
}

// Drops the challenged peers whose handshake deadline has passed.
void expireStartups(Clock::time_point Now) {
  for (auto It = Pending.begin(); It != Pending.end();) {
    if (Now < It->Deadline) {
      ++It;
      continue;
    }
    wire::refuseConnection(It->Fd, wire::AuthRefusal.str() + ": " + tooSlow());
    ::close(It->Fd);
    Budget->done(It->Source);
    Refusals.note(RefusalLog::Kind::Silent, It->Source,
                  "refused " + It->Peer + " on " + It->Via + ": " + tooSlow());
    It = Pending.erase(It);
  }
}

// Who started the executor, watched so that it ends with them.
struct Launchers {
  ParentWatch Parent;
  SrunWatch Srun;
};

// What the loop waits on: the listeners, the wake-up pipe, the parent and
// srun (when watched), then every challenged peer (Polling says which,
// from FirstPending on).
constexpr size_t PollFixed = 3;
void watch(std::vector<pollfd> &Polled, std::vector<std::list<Startup>::iterator> &Polling,
           const std::vector<Listener> &Listeners, const Launchers &Watched) {
  Polled.clear();
  Polling.clear();
  bool Paused = Clock::now() < AcceptPausedUntil;
  for (auto &L : Listeners)
    Polled.push_back({Paused ? -1 : L.Fd, POLLIN, 0});
  Polled.push_back({Signals.WakeFds[0], POLLIN, 0});
  Polled.push_back({Watched.Parent.fd(), POLLIN, 0});
  Polled.push_back({Watched.Srun.fd(), POLLIN, 0});
  for (auto It = Pending.begin(); It != Pending.end(); ++It) {
    Polled.push_back({It->Fd, POLLIN, 0});
    Polling.push_back(It);
  }
}

// How long the loop may sleep without an event: until the next deadline
// of a peer not yet admitted, or Flush (the refusal summary). A child
// whose peer was admitted wakes the listener itself; should that byte be
// lost, it becomes a session within a second all the same.
int msUntilNext(Clock::time_point Flush, const Launchers &Watched) {
  Clock::time_point Next = Flush;
  for (int Look : {Watched.Parent.pollTimeoutMs(), Watched.Srun.pollTimeoutMs()})
    if (Look >= 0)
      Next = std::min(Next, Clock::now() + std::chrono::milliseconds(Look));
  if (AcceptPausedUntil > Clock::now())
    Next = std::min(Next, AcceptPausedUntil);
  for (auto &S : Pending)
    Next = std::min(Next, S.Deadline);
  for (auto &[Pid, C] : Children)
    if (C.Starting)
      Next = std::min({Next, C.Deadline, Clock::now() + std::chrono::seconds(1)});
  auto Ms = std::chrono::ceil<std::chrono::milliseconds>(Next - Clock::now()).count();
  return int(std::clamp<int64_t>(Ms, 0, INT32_MAX));
}

// Whether the executor has served nobody for Limit (--idle-exit): then it
// says so and stops, as on a stop signal.
bool idleTooLong(Clock::time_point Since, std::chrono::milliseconds Limit) {
  if (Clock::now() - Since < Limit)
    return false;
  LogLine() << "catalyst-remote-executor: no session for " << secondsText(Limit)
            << " s (--idle-exit): stopping";
  return true;
}

// The launcher that started the executor has ended (killed, out of memory,
// its node agent gone) without stopping it: it says so and stops, as on a
// stop signal. An srun gone leaves the step's other executors running on
// machines that cannot see it: Slurm is asked to stop them too.
bool orphaned(const Launchers &Watched) {
  if (Watched.Parent.gone()) {
    withdrawAnnouncement();
    LogLine() << "catalyst-remote-executor: the process that started it (pid "
              << Watched.Parent.parent() << ") has ended: stopping (--detach keeps it running)";
    return true;
  }
  if (pmixServerLost()) {
    withdrawAnnouncement();
    LogLine() << "catalyst-remote-executor: its connection to the PMIx server of the launcher "
                 "that started it is lost: stopping (--detach keeps it running)";
    return true;
  }
  if (!Watched.Srun.gone())
    return false;
  withdrawAnnouncement();
  LogLine() << "catalyst-remote-executor: the srun that started its step (pid "
            << Watched.Srun.srun() << ") has ended: stopping the step (--detach keeps it running)";
  Watched.Srun.endStep();
  return true;
}

// Connection processes get Grace (--stop-grace) to finish the launches
// they are running and end their sessions after SIGTERM, then are killed
// (a kernel does not stop for a signal).
void stopChildren(std::chrono::milliseconds Grace) {
  for (auto &[Pid, C] : Children)
    // Fails only for a process already gone, which reapChildren() then sees.
    ::kill(Pid, SIGTERM);
  auto Deadline = std::chrono::steady_clock::now() + Grace;
  while (!Children.empty() && std::chrono::steady_clock::now() < Deadline) {
    reapChildren();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto &[Pid, C] : Children) {
    LogLine() << "catalyst-remote-executor: connection process " << Pid << " has not ended "
              << secondsText(Grace) << " s after SIGTERM (--stop-grace): killing it";
    // Fails only for a process already gone, which the reaper then sees.
    ::kill(Pid, SIGKILL);
  }
  while (!Children.empty())
    reapChildren(/*Block=*/true);
}

// Catalyst's launcher reads stdout through a pipe and waits for the
// readiness line, so it goes out at once rather than when a buffer fills.
void announce(const std::vector<Listener> &Listeners) {
  for (const Listener &L : Listeners)
    std::printf("catalyst-remote-executor: listening on %s\nListening on %s\n", L.Address.c_str(),
                L.Address.c_str());
  std::fflush(stdout);
}

// Adds the local socket to Listeners, and the offer naming it to what
// connection processes tell their hosts. Without it hosts use TCP, so a
// failure is a warning.
void listenLocally(std::vector<Listener> &Listeners, ServeOptions &Options) {
  std::string Name;
  auto Fd = wire::listenLocal(Name);
  auto Boot = wire::thisBootId();
  if (!Fd || !Boot) {
    Error Err = joinErrors(Fd ? Error::success() : Fd.takeError(),
                           Boot ? Error::success() : Boot.takeError());
    LogLine() << "catalyst-remote-executor: warning: not offering shared memory to hosts on this "
                 "machine: "
              << toString(std::move(Err));
    if (Fd)
      ::close(*Fd);
    return;
  }
  Listeners.push_back({*Fd, "local socket @" + Name, {}});
  Options.Connection.Services.LocalOffer =
      wire::encodeLocalOffer({Name, *Boot, uint32_t(::getpid())});
}

// Every peer not yet authenticated holds a descriptor, every session two
// (the listener keeps a copy): raises the soft limit as far as the hard
// one allows, and lowers FULL of --max-startups to what fits.
void fitDescriptors(ServeOptions &Options) {
  rlimit L{};
  if (::getrlimit(RLIMIT_NOFILE, &L) != 0)
    return;
  if (L.rlim_cur < L.rlim_max) {
    rlimit Raised{L.rlim_max, L.rlim_max};
    if (::setrlimit(RLIMIT_NOFILE, &Raised) == 0)
      L = Raised;
  }
  const uint64_t Reserved = 64 + 2 * uint64_t(Options.MaxConnections);
  StartupLimits &S = Options.Startups;
  if (L.rlim_cur == RLIM_INFINITY || L.rlim_cur >= Reserved + S.Full)
    return;
  unsigned Fits = L.rlim_cur > Reserved + 1 ? unsigned(L.rlim_cur - Reserved) : 1;
  LogLine() << "catalyst-remote-executor: warning: only " << L.rlim_cur
            << " descriptors (ulimit -n): at most " << Fits
            << " peers may wait to authenticate, not " << S.Full << " (--max-startups)";
  S.Full = Fits;
  S.Start = std::min(S.Start, Fits);
}

// In a directory or through PMIx, as --announce says.
Error announceAsAsked(const ServeOptions &Options, const std::vector<Listener> &Listeners) {
  if (Options.AnnouncePmix)
    return announceThroughPmix(Listeners, Options.WatchPmixServer ? Signals.WakeFds[1] : -1);
  if (!Options.AnnounceDir.empty())
    return announceIn(Options.AnnounceDir, Listeners);
  return Error::success();
}

} // namespace

int serve(std::vector<Listener> Listeners, const ServeOptions &Given) {
  ServeOptions Options = Given;
  if (::pipe2(Signals.WakeFds, O_CLOEXEC | O_NONBLOCK) != 0) {
    LogLine() << "catalyst-remote-executor: pipe: " << std::strerror(errno);
    return 1;
  }
  sigset_t Taken;
  sigemptyset(&Taken);
  for (int S : StopSignals)
    sigaddset(&Taken, S);
  sigaddset(&Taken, SIGCHLD);
  // Cannot fail: valid signals. Before the handlers, and before any thread
  // (PMIx's) that would inherit the mask, so that only the wait takes them.
  ::pthread_sigmask(SIG_BLOCK, &Taken, &Signals.WaitMask);
  struct sigaction SA {};
  SA.sa_handler = onSignal;
  sigemptyset(&SA.sa_mask);
  // Cannot fail: a valid handler for signals a process may catch.
  for (int S : StopSignals)
    ::sigaction(S, &SA, nullptr);
  ::sigaction(SIGCHLD, &SA, nullptr);
  // Only now: a SIGTERM from here on still lets it be removed.
  if (auto Err = createAssetRoot()) {
    LogLine() << "catalyst-remote-executor: " << toString(std::move(Err));
    return 1;
  }
  // Found before the executor is announced: a host, or a test, may end
  // srun as soon as it sees the announcement.
  Launchers Watched{Options.WatchParent > 0 ? ParentWatch::start(Options.WatchParent)
                                            : ParentWatch(),
                    Options.WatchSrun ? SrunWatch::find() : SrunWatch()};
  // The sockets listen already: the file is there by the time the ready
  // line says so.
  if (auto Err = announceAsAsked(Options, Listeners)) {
    LogLine() << "catalyst-remote-executor: " << toString(std::move(Err));
    endPmixAnnouncement();
    removeAssetRoot();
    return 1;
  }
  announce(Listeners);
  // An upstream-only executor has nothing to offer there.
  if (Options.LocalSocket && !Options.Connection.Services.UpstreamOnly)
    listenLocally(Listeners, Options);
  fitDescriptors(Options);
  HandshakeTimeout = Options.Connection.HandshakeTimeout;
  Options.Connection.AdmittedFd = Signals.WakeFds[1];
  Budget.emplace(Options.Startups);
  std::vector<pollfd> Polled;
  std::vector<std::list<Startup>::iterator> Polling;
  Clock::time_point IdleSince = Clock::now();
  while (!Signals.StopRequested && !orphaned(Watched)) {
    watch(Polled, Polling, Listeners, Watched);
    Clock::time_point Wake = Refusals.flush();
    if (!Children.empty() || !Pending.empty())
      IdleSince = Clock::now();
    else if (Options.IdleExit.count() > 0 && idleTooLong(IdleSince, Options.IdleExit))
      break;
    else if (Options.IdleExit.count() > 0)
      Wake = std::min(Wake, IdleSince + Options.IdleExit);
    int Ms = msUntilNext(Wake, Watched);
    timespec Timeout{Ms / 1000, (Ms % 1000) * 1000000L};
    if (::ppoll(Polled.data(), Polled.size(), &Timeout, &Signals.WaitMask) < 0 && errno != EINTR)
      break;
    char Drain[64];
    while (::read(Signals.WakeFds[0], Drain, sizeof(Drain)) > 0) {
    }
    reapChildren();
    checkStartingChildren(Clock::now());
    for (size_t I = 0; I < Polling.size(); ++I)
      if (Polled[Listeners.size() + PollFixed + I].revents &&
          advanceStartup(*Polling[I], Listeners, Options))
        Pending.erase(Polling[I]);
    expireStartups(Clock::now());
    // A flood is taken in batches, so that the peers already here advance
    // between them.
    for (size_t I = 0; I < Listeners.size() && !Signals.StopRequested; ++I)
      for (int K = 0;
           K < 64 && (Polled[I].revents & POLLIN) && acceptOne(Listeners[I], Listeners, Options);
           ++K) {
      }
  }
  // Cannot fail: the mask it started with. Stopping waits without ppoll().
  ::pthread_sigmask(SIG_SETMASK, &Signals.WaitMask, nullptr);
  withdrawAnnouncement();
  endPmixAnnouncement();
  for (auto &S : Pending)
    ::close(S.Fd);
  Pending.clear();
  for (auto &L : Listeners)
    ::close(L.Fd);
  stopChildren(Options.StopGrace);
  removeAssetRoot();
  return 0;
}

} // namespace catalyst::remote::executor
