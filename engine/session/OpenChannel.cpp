//===- OpenChannel.cpp - The connection a session runs over ------------------===//

#include "OpenChannel.h"

#include "Connect.h"
#include "catalyst/remote/Failure.h"
#include "wire/Handshake.h"
#include "wire/LocalOffer.h"
#include "wire/UnixSocket.h"

#include <algorithm>
#include <random>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace llvm;

namespace catalyst::remote {

namespace {

using Deadline = std::chrono::steady_clock::time_point;

Error cannotOpen(StringRef Address, const Twine &How, Error Why) {
  return withContext("cannot open a session with " + Address + How, std::move(Why));
}

Error notLocal(const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), Why);
}

// Hangs up a TCP connection whose setup message was only peeked at: read
// first, so that the close is orderly (unread bytes would reset it, and
// the executor's connection process would log an error). Over TLS the
// stream has read it already.
void hangUp(Channel &L, size_t SetupBytes) {
  std::vector<char> Sink(SetupBytes);
  // Best effort: all of it is buffered (the handshake waited for it), and a
  // short read only makes the close a reset.
  [[maybe_unused]] ssize_t N = L.Tls ? 0 : ::recv(L.Fd, Sink.data(), Sink.size(), MSG_DONTWAIT);
  L.Tls.reset();
  ::close(L.Fd);
}

// The offer in Setup when the executor makes one on this machine; else why
// it cannot be used.
Expected<wire::LocalOffer> usableOffer(ArrayRef<char> Setup) {
  auto Offer = wire::findLocalOffer(Setup);
  if (!Offer)
    return notLocal("the executor offers no local socket (not this project's executor, or one "
                    "started with --no-shared-memory or --upstream-only)");
  auto Boot = wire::thisBootId();
  if (!Boot)
    return Boot.takeError();
  if (*Boot != Offer->BootId)
    return notLocal("the executor runs on another machine (its boot id is not this one's)");
  return *Offer;
}

// An executor with too many peers that have not authenticated yet drops
// new ones, saying it is busy (executor/Startups.h): Attempt is tried again,
// a little later each time, until the deadline. A host that authenticates
// quickly then gets in while slow or silent peers pile up.
constexpr std::chrono::milliseconds LastAttempt{50};

template <typename AttemptFn> Expected<Channel> retryWhileBusy(Deadline By, AttemptFn Attempt) {
  std::minstd_rand Jitter(uint32_t(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::chrono::milliseconds Pause(2);
  for (;;) {
    auto L = Attempt();
    auto Wait = Pause / 2 + std::chrono::milliseconds(Jitter() % (Pause.count() / 2 + 1));
    // An attempt with next to no time left would fail for its deadline
    // and hide why: the executor is busy.
    if (L || !L.template errorIsA<wire::ExecutorBusy>() ||
        std::chrono::steady_clock::now() + Wait + LastAttempt >= By)
      return L;
    consumeError(L.takeError()); // busy: the next attempt says more
    std::this_thread::sleep_for(Wait);
    // A refusal costs the executor an accept and a close: retrying every
    // 25-50 ms keeps a host's chances up without loading it.
    Pause = std::min(Pause * 2, std::chrono::milliseconds(50));
  }
}

// What this host brings to the handshake on a socket that is (Local) or is
// not a Unix socket: plain or TLS when asked, else what the executor says
// (TLS over TCP by default with a token, plain on Unix sockets).
Expected<wire::HostAuth> hostAuth(const SessionOptions &O, bool Local) {
  wire::HostAuth A;
  A.Secret = O.Secret.reveal();
  if (O.Wire == WireProtection::Tls && A.Secret.empty())
    return makeFailure(FailureKind::Authentication,
                       "TLS (CATALYST_REMOTE_WIRE=tls or SessionOptions::Wire) needs the "
                       "executor's token: it keys TLS; give CATALYST_REMOTE_TOKEN_FILE");
  if (O.Wire == WireProtection::Tls && Local)
    return makeFailure(FailureKind::BadArgument,
                       "TLS (CATALYST_REMOTE_WIRE=tls or SessionOptions::Wire) is for TCP: "
                       "socket files and the local socket are always plain (the kernel "
                       "checks the peer's user); use auto or plain");
  if (O.Wire != WireProtection::Auto)
    A.Wire = O.Wire == WireProtection::Tls ? wire::WireMode::Tls : wire::WireMode::Plain;
  A.Setting = std::string("CATALYST_REMOTE_WIRE=") + wireName(O.Wire) + " or SessionOptions::Wire";
  return A;
}

// Fd, once the executor on it proved itself, and its TLS stream when it
// has one; Fd is closed otherwise.
Expected<Channel> authenticated(Expected<int> Fd, const SessionOptions &O, Deadline By,
                                std::vector<char> *Setup) {
  if (!Fd)
    return Fd.takeError();
  auto Auth = hostAuth(O, wire::isUnixSocket(*Fd));
  if (!Auth) {
    ::close(*Fd);
    return Auth.takeError();
  }
  auto Tls = wire::authenticateExecutor(*Fd, *Auth, By, Setup);
  if (!Tls) {
    ::close(*Fd);
    return Tls.takeError();
  }
  bool SocketFile = wire::isUnixSocket(*Fd);
  return Channel{*Fd, SocketFile ? TransportKind::SocketFile : TransportKind::Tcp, std::move(*Tls)};
}

Expected<Channel> connectToOffer(const wire::LocalOffer &Offer, const SessionOptions &O,
                                 Deadline By) {
  return retryWhileBusy(By, [&] {
    return authenticated(wire::connectLocal(Offer.Socket, Offer.Pid, By), O, By, nullptr);
  });
}

std::chrono::milliseconds timeLeft(Deadline By) {
  return std::max(
      std::chrono::milliseconds(1),
      std::chrono::duration_cast<std::chrono::milliseconds>(By - std::chrono::steady_clock::now()));
}

// A connection to Address (TCP or unix:PATH), authenticated; Setup, when
// given, receives the setup message. A failure to connect says so itself;
// one to authenticate names the address.
Expected<Channel> openStream(StringRef Address, const SessionOptions &O, Deadline By,
                             std::vector<char> *Setup) {
  bool Connected = false;
  auto L = retryWhileBusy(By, [&] {
    auto Fd = connectTo(Address, timeLeft(By));
    Connected = bool(Fd);
    return authenticated(std::move(Fd), O, By, Setup);
  });
  if (!L && Connected)
    return cannotOpen(Address, "", L.takeError());
  return L;
}

} // namespace

// The TCP connection is hung up before the local one is made: the
// listener counts connections against --max-connections, and one it sees
// hung up no longer counts, so the local one takes its place.
Expected<Channel> openChannel(StringRef Address, const SessionOptions &O, Deadline By) {
  std::vector<char> Setup;
  auto L = openStream(Address, O, By, &Setup);
  if (!L || O.Transport == TransportKind::Tcp)
    return L;
  const char *How = " through its local socket (transport local)";
  auto Offer = usableOffer(Setup);
  if (!Offer && O.Transport == TransportKind::Local) {
    ::close(L->Fd);
    return cannotOpen(Address, How, Offer.takeError());
  }
  if (!Offer) {
    // Auto: TCP serves every executor; that this one offers no better is no
    // failure.
    consumeError(Offer.takeError());
    return L;
  }
  hangUp(*L, Setup.size());
  auto Local = connectToOffer(*Offer, O, By);
  if (Local) {
    Local->Kind = TransportKind::Local;
    return Local;
  }
  if (O.Transport == TransportKind::Local)
    return cannotOpen(Address, How, Local.takeError());
  // Auto, and the offer led nowhere (the executor in another network
  // namespace, say): TCP again.
  consumeError(Local.takeError());
  return openStream(Address, O, By, nullptr);
}

} // namespace catalyst::remote
