//===- Listener.cpp - Accepting hosts, one process per connection ---------===//

#include "Listener.h"

#include "../engine/wire/Handshake.h"
#include "../engine/wire/Keepalive.h"
#include "../engine/wire/LocalOffer.h"
#include "../engine/wire/SendMark.h"
#include "../engine/wire/UnixSocket.h"
#include "Assets.h"
#include "Log.h"

#include "llvm/Support/raw_ostream.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <new>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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

int WakeFds[2] = {-1, -1};
volatile sig_atomic_t StopRequested = 0;

void onSignal(int Sig) {
  if (Sig != SIGCHLD)
    StopRequested = 1;
  int Saved = errno;
  [[maybe_unused]] ssize_t N = ::write(WakeFds[1], "x", 1);
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

// A connection process, with the listener's own copy of its socket (kept
// to tell the host why the process died, when it could not) and the record
// it shares with it.
struct Child {
  int Fd;
  ConnectionRecord *Record;
};
std::map<pid_t, Child> Children;

ConnectionRecord *newRecord() {
  void *P = ::mmap(nullptr, sizeof(ConnectionRecord), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return P == MAP_FAILED ? nullptr : new (P) ConnectionRecord();
}

// Closing a socket with unread bytes resets the connection, and a reset
// can make the host drop what it had not read yet: the reason it was just
// sent. So what is left unread (a request the dead process never took) goes
// first, and the close is an orderly one.
void release(const Child &C) {
  char Sink[4096];
  for (int I = 0; I < 256 && ::recv(C.Fd, Sink, sizeof(Sink), MSG_DONTWAIT) > 0; ++I) {
  }
  ::close(C.Fd);
  C.Record->~ConnectionRecord();
  ::munmap(C.Record, sizeof(ConnectionRecord));
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

// A process that died without ending its session could not tell its host
// why: the listener does, unless the process died in the middle of a
// message (a frame now would be read as its rest) or its crash reporter
// already took the connection (its mark then never ends).
void reportDeath(const siginfo_t &End, const Child &C) {
  if (C.Record->Ended || !wire::endsBetweenMessages(C.Fd, C.Record->Sending))
    return;
  wire::refuseConnection(C.Fd, deathOf(End));
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
      release(It->second);
      Children.erase(It);
    }
    logExit(End);
    // A connection process that crashed could not remove its own assets.
    removeAssets(End.si_pid);
    ::waitpid(End.si_pid, nullptr, 0);
    End = siginfo_t{};
  }
  if (Got < 0 && errno == ECHILD) {
    for (auto &[P, C] : Children)
      release(C);
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
    N += !over(C);
  return N;
}

[[noreturn]] void runChild(int Conn, const std::string &Peer, std::vector<Listener> &Listeners,
                           const ConnectionOptions &Options, const wire::Nonce &Challenge,
                           ConnectionRecord &Record) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  for (int S : StopSignals)
    std::signal(S, SIG_DFL);
  std::signal(SIGCHLD, SIG_DFL);
  for (auto &L : Listeners)
    ::close(L.Fd);
  ::close(WakeFds[0]);
  ::close(WakeFds[1]);
  // Other hosts' connections: holding them would keep them open past their
  // own processes.
  for (auto &[P, C] : Children)
    ::close(C.Fd);
  // A local socket has no delayed acknowledgements to avoid, and its peer's
  // end closes with its process.
  if (!wire::isUnixSocket(Conn)) {
    int One = 1;
    ::setsockopt(Conn, IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One));
    wire::enableKeepalive(Conn);
  }
  ::_exit(serveConnection(Conn, Peer, Options, Challenge, Record));
}

void acceptOne(Listener &L, std::vector<Listener> &All, const ServeOptions &Options) {
  sockaddr_storage Peer{};
  socklen_t Len = sizeof(Peer);
  int Conn = ::accept4(L.Fd, reinterpret_cast<sockaddr *>(&Peer), &Len, SOCK_CLOEXEC);
  if (Conn < 0) {
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
      LogLine() << "catalyst-remote-executor: accept on " << L.Address
                << " failed: " << std::strerror(errno);
    return;
  }
  std::string PeerName = numericAddress(reinterpret_cast<sockaddr *>(&Peer), Len);
  if (Peer.ss_family == AF_UNIX)
    PeerName = "local process " + std::to_string(wire::peerOf(Conn).Pid);
  // A connection that just ended may not have been reaped yet (its SIGCHLD
  // can arrive after this wake-up): it no longer counts.
  reapChildren();
  if (servedNow() >= Options.MaxConnections) {
    std::string Why = "executor at capacity: " + std::to_string(Options.MaxConnections) +
                      " sessions (--max-connections)";
    wire::refuseConnection(Conn, Why);
    ::close(Conn);
    LogLine() << "catalyst-remote-executor: refused " << PeerName << " on " << L.Address << ": "
              << Why;
    return;
  }
  wire::Nonce Challenge{};
  if (!Options.Connection.Secret.empty())
    if (auto Err = wire::drawNonce(Challenge)) {
      LogLine() << "catalyst-remote-executor: refused " << PeerName << ": "
                << toString(std::move(Err));
      ::close(Conn);
      return;
    }
  ConnectionRecord *Record = newRecord();
  pid_t Pid = Record ? ::fork() : -1;
  if (Pid == 0)
    runChild(Conn, PeerName, All, Options.Connection, Challenge, *Record);
  if (Pid < 0) {
    LogLine() << "catalyst-remote-executor: cannot fork for " << PeerName << ": "
              << std::strerror(errno);
    if (Record)
      release({Conn, Record});
    else
      ::close(Conn);
    return;
  }
  Children[Pid] = {Conn, Record};
  LogLine() << "catalyst-remote-executor: " << PeerName << " connected to " << L.Address
            << ", served by process " << Pid;
}

// How long connection processes get to end their sessions after SIGTERM
// before they are killed (a kernel does not stop for it). Well under the
// 10 s Catalyst's launcher gives the executor before it SIGKILLs it, which
// would leave the asset directory behind.
constexpr std::chrono::seconds StopGrace{5};

void stopChildren() {
  for (auto &[Pid, C] : Children)
    ::kill(Pid, SIGTERM);
  auto Deadline = std::chrono::steady_clock::now() + StopGrace;
  while (!Children.empty() && std::chrono::steady_clock::now() < Deadline) {
    reapChildren();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto &[Pid, C] : Children) {
    LogLine() << "catalyst-remote-executor: connection process " << Pid << " has not ended "
              << StopGrace.count() << " s after SIGTERM (a running kernel does not stop for it): "
              << "killing it";
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

} // namespace

int serve(std::vector<Listener> Listeners, const ServeOptions &Given) {
  ServeOptions Options = Given;
  if (::pipe2(WakeFds, O_CLOEXEC | O_NONBLOCK) != 0) {
    LogLine() << "catalyst-remote-executor: pipe: " << std::strerror(errno);
    return 1;
  }
  struct sigaction SA {};
  SA.sa_handler = onSignal;
  sigemptyset(&SA.sa_mask);
  for (int S : StopSignals)
    ::sigaction(S, &SA, nullptr);
  ::sigaction(SIGCHLD, &SA, nullptr);
  // Only now: a SIGTERM from here on still lets it be removed.
  if (auto Err = createAssetRoot()) {
    LogLine() << "catalyst-remote-executor: " << toString(std::move(Err));
    return 1;
  }
  announce(Listeners);
  // An upstream-only executor has nothing to offer there.
  if (Options.LocalSocket && !Options.Connection.Services.UpstreamOnly)
    listenLocally(Listeners, Options);
  std::vector<pollfd> Polled;
  for (auto &L : Listeners)
    Polled.push_back({L.Fd, POLLIN, 0});
  Polled.push_back({WakeFds[0], POLLIN, 0});
  while (!StopRequested) {
    if (::poll(Polled.data(), Polled.size(), -1) < 0 && errno != EINTR)
      break;
    char Drain[64];
    while (::read(WakeFds[0], Drain, sizeof(Drain)) > 0) {
    }
    reapChildren();
    for (size_t I = 0; I < Listeners.size() && !StopRequested; ++I)
      if (Polled[I].revents & POLLIN)
        acceptOne(Listeners[I], Listeners, Options);
  }
  for (auto &L : Listeners)
    ::close(L.Fd);
  stopChildren();
  removeAssetRoot();
  return 0;
}

} // namespace catalyst::remote::executor
