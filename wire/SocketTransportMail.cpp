//===- SocketTransportMail.cpp - The shared mailbox -------------------------===//
//
// Over the local socket, launches and their results go through a mailbox
// in shared memory (Mailbox.h) rather than the socket: posting, waiting
// for mail (spinning, then sleeping on the socket behind a doorbell) and
// keeping mailbox messages in order with socket frames.
//
//===----------------------------------------------------------------------===//

#include "SocketTransport.h"

#include "llvm/Support/Endian.h"

#include <chrono>
#include <cstdint>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

// Spins up to Opts.Spin for a message in the mailbox or a byte on the
// socket; when neither came, says in the mailbox that this end sleeps on
// the socket, then looks once more. True when a mailbox message is to be
// taken now; false when the socket has (or will have) what comes next.
Expected<bool> SocketTransport::awaitMail(Mailbox &B) {
  auto Until = std::chrono::steady_clock::now() + Opts.Spin;
  for (;;) {
    auto S = B.look(FramesIn, [this] { return bytesWaiting(); });
    if (!S)
      return S.takeError();
    if (*S != Mailbox::State::Empty)
      return *S == Mailbox::State::Ready;
    if (Stream.readable())
      return false;
    if (std::chrono::steady_clock::now() >= Until)
      break;
    ::sched_yield();
  }
  B.setAsleep(true);
  Asleep = true;
  auto S = B.look(FramesIn, [this] { return bytesWaiting(); });
  if (!S)
    return S.takeError();
  return *S == Mailbox::State::Ready;
}

// Bytes the socket holds unread (the mailbox runs over a Unix socket, not
// TLS); as many as could be, when the kernel cannot say.
uint64_t SocketTransport::bytesWaiting() const {
  int Bytes = 0;
  return ::ioctl(Stream.fd(), FIONREAD, &Bytes) == 0 ? uint64_t(Bytes) : UINT64_MAX;
}

void SocketTransport::wake(Mailbox &B) {
  if (Asleep)
    B.setAsleep(false);
  Asleep = false;
}

// A message from the mailbox, handled as a payload message without payload.
Error SocketTransport::readMail(Mailbox &B) {
  wake(B);
  auto M = B.take();
  if (!M)
    return M.takeError();
  Heard.fetch_add(1, std::memory_order_relaxed);
  PayloadHandler *Handler = Payloads.load();
  if (!isMailOpcode(M->OpC) || !Handler)
    return createStringError(inconvertibleErrorCode(),
                             "peer posted a message of opcode %llu to the shared mailbox, which "
                             "carries enabled launches and their results only",
                             (unsigned long long)M->OpC);
  PostToPeer.store(true, std::memory_order_relaxed); // the peer reads it too
  Received.fetch_add(1, std::memory_order_relaxed);
  BytesIn.fetch_add(HeaderSize + M->Plan.size(), std::memory_order_relaxed);
  auto Op = static_cast<PayloadOpcode>(M->OpC);
  auto Dst = Handler->place(Op, M->SeqNo, {M->Plan.data(), M->Plan.size()}, 0);
  Error Placed = Dst ? Error::success() : Dst.takeError();
  if (Dst && !Dst->empty())
    Placed =
        createStringError(inconvertibleErrorCode(),
                          "a message without payload was given %zu places for one", Dst->size());
  Handler->finish(Op, M->SeqNo, std::move(M->Plan), std::move(Placed));
  return Error::success();
}

Error SocketTransport::readDoorbell(Head &H, uint64_t MsgSize) {
  if (MsgSize != HeaderSize || !Mail.load())
    return createStringError(inconvertibleErrorCode(), "peer rang a doorbell of %llu bytes%s",
                             (unsigned long long)MsgSize,
                             Mail.load() ? "" : " with no shared mailbox open");
  if (!H.Consumed)
    return readExact(H.Bytes, HeaderSize, nullptr);
  return Error::success();
}

// Under SendMutex, right after a post that found the reader asleep. A
// doorbell that cannot go would leave the peer asleep on a message:
// whatever went wrong, the connection ends.
Error SocketTransport::ringDoorbell() {
  Error Err = sendBareFrame(DoorbellOpcode, "ringing the peer's doorbell");
  if (Err)
    closeWith("a message was posted to the shared mailbox, but the peer could not be woken",
              FailureKind::ExecutorLost);
  return Err;
}

Error SocketTransport::attachMailbox(std::unique_ptr<Mailbox> B, bool PeerReads) {
  sync::MutexLock Lock(SendMutex);
  if (OwnedMail)
    return createStringError(inconvertibleErrorCode(), "the session has a shared mailbox already");
  OwnedMail = std::move(B);
  PostToPeer.store(PeerReads, std::memory_order_relaxed);
  Mail.store(OwnedMail.get(), std::memory_order_release);
  return Error::success();
}

} // namespace catalyst::remote::wire
