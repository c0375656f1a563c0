//===- OpenLink.cpp - The connection a session runs over ------------------===//

#include "OpenLink.h"

#include "../wire/Handshake.h"
#include "../wire/LocalOffer.h"
#include "../wire/UnixSocket.h"
#include "Connect.h"

#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using namespace llvm;

namespace catalyst::remote {

namespace {

using Deadline = std::chrono::steady_clock::time_point;

Error cannotOpen(StringRef Address, const Twine &How, Error Why) {
  return createStringError(inconvertibleErrorCode(), "cannot open a session with " + Address + How +
                                                         ": " + toString(std::move(Why)));
}

Error notLocal(const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), Why);
}

// Hangs up a TCP connection whose setup message was only peeked at: read
// first, so that the close is orderly (unread bytes would reset it, and
// the executor's connection process would log an error).
void hangUp(int Fd, size_t SetupBytes) {
  std::vector<char> Sink(SetupBytes);
  // Best effort: all of it is buffered (the handshake waited for it), and a
  // short read only makes the close a reset.
  [[maybe_unused]] ssize_t N = ::recv(Fd, Sink.data(), Sink.size(), MSG_DONTWAIT);
  ::close(Fd);
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

Expected<int> connectToOffer(const wire::LocalOffer &Offer, const SessionOptions &O, Deadline By) {
  auto Fd = wire::connectLocal(Offer.Socket, Offer.Pid, By);
  if (!Fd)
    return Fd.takeError();
  if (auto Err = wire::authenticateExecutor(*Fd, O.Secret.reveal(), By)) {
    ::close(*Fd);
    return Err;
  }
  return *Fd;
}

// TCP to Address, authenticated; Setup, when given, receives the setup
// message.
Expected<int> openTcp(StringRef Address, const SessionOptions &O, Deadline By,
                      std::vector<char> *Setup) {
  auto Fd = connectTcp(Address, O.HandshakeTimeout);
  if (!Fd)
    return Fd.takeError();
  if (auto Err = wire::authenticateExecutor(*Fd, O.Secret.reveal(), By, Setup)) {
    ::close(*Fd);
    return cannotOpen(Address, "", std::move(Err));
  }
  return *Fd;
}

} // namespace

// The TCP connection is hung up before the local one is made: the
// listener counts connections against --max-connections, and one it sees
// hung up no longer counts, so the local one takes its place.
Expected<Link> openLink(StringRef Address, const SessionOptions &O, Deadline By) {
  std::vector<char> Setup;
  auto Fd = openTcp(Address, O, By, &Setup);
  if (!Fd || O.Transport == TransportKind::Tcp)
    return Fd ? Expected<Link>(Link{*Fd, TransportKind::Tcp}) : Fd.takeError();
  const char *How = " over shared memory (transport shm)";
  auto Offer = usableOffer(Setup);
  if (!Offer && O.Transport == TransportKind::Shm) {
    ::close(*Fd);
    return cannotOpen(Address, How, Offer.takeError());
  }
  if (!Offer) {
    // Auto: TCP serves every executor; that this one offers no better is no
    // failure.
    consumeError(Offer.takeError());
    return Link{*Fd, TransportKind::Tcp};
  }
  hangUp(*Fd, Setup.size());
  auto Local = connectToOffer(*Offer, O, By);
  if (Local)
    return Link{*Local, TransportKind::Shm};
  if (O.Transport == TransportKind::Shm)
    return cannotOpen(Address, How, Local.takeError());
  // Auto, and the offer led nowhere (the executor in another network
  // namespace, say): TCP again.
  consumeError(Local.takeError());
  Fd = openTcp(Address, O, By, nullptr);
  return Fd ? Expected<Link>(Link{*Fd, TransportKind::Tcp}) : Fd.takeError();
}

} // namespace catalyst::remote
