//===- SocketTransport.cpp - ORC EPC framing over one TCP socket ----------===//

#include "SocketTransport.h"

#include "PeerText.h"
#include "SocketTimeouts.h"
#include "SpsCheck.h"
#include "SysError.h"
#include "TlsStream.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mimalloc.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

namespace {

void encodeHeader(char *H, uint64_t MsgSize, SimpleRemoteEPCOpcode OpC, uint64_t SeqNo,
                  ExecutorAddr TagAddr) {
  support::endian::write64le(H, MsgSize);
  support::endian::write64le(H + 8, static_cast<uint64_t>(OpC));
  support::endian::write64le(H + 16, SeqNo);
  support::endian::write64le(H + 24, TagAddr.getValue());
}

// The plan of a payload message is small; the payload is what may be large.
constexpr uint64_t MaxPlanSize = 64 << 20;
// A reason to hang up is a line of text: more is no reason.
constexpr uint64_t MaxHangupFrame = 64 << 10;
static_assert(SocketTransport::PeekSize >= SocketTransport::HeaderSize);
// Strided payloads are packed into scratch of 1 MiB, or as much as a
// transposed view needs to read its source lines whole, up to 16 MiB; a
// transposed view of up to 64 MiB whole, which the packer copies in source
// order at about twice the speed. The scratch is kept for the next send.
constexpr size_t ChunkSize = 1 << 20;
constexpr size_t MaxChunkSize = 16 << 20;
constexpr size_t MaxWholeChunkSize = 64 << 20;

// A blocking send returns only once all it was given is queued: each call
// gets at most this much, so that bytesWritten() grows while a large message
// goes out. That is one system call more per MiB, a microsecond or two
// against the millisecond or so the MiB takes to move; and a step fits in
// the socket buffers of a warmed-up connection, so that it returns even
// while the peer reads nothing.
constexpr size_t SendStep = 1 << 20;

// How many of Iov's first Count entries one call sends, and by how much the
// last of them overshoots the step (trimmed for that call).
std::pair<int, size_t> stepOf(const iovec *Iov, int Count) {
  int N = 0;
  size_t Total = 0;
  while (N < std::min(Count, IOV_MAX) && Total < SendStep)
    Total += Iov[N++].iov_len;
  return {N, Total > SendStep ? Total - SendStep : 0};
}

// Joins pieces that continue one another (slices of one buffer, inputs
// placed back to back in a slab) and drops empty ones, in place: each piece
// costs the kernel a step per call. Returns the pieces left.
int joinAdjacent(iovec *Iov, int Count) {
  int Out = 0;
  for (int I = 0; I < Count; ++I) {
    if (Iov[I].iov_len == 0)
      continue;
    if (Out > 0 &&
        static_cast<char *>(Iov[Out - 1].iov_base) + Iov[Out - 1].iov_len == Iov[I].iov_base)
      Iov[Out - 1].iov_len += Iov[I].iov_len;
    else
      Iov[Out++] = Iov[I];
  }
  return Out;
}

} // namespace

PayloadHandler::~PayloadHandler() = default;
PayloadSink::~PayloadSink() = default;

PayloadSink *PayloadHandler::sinkFor(size_t) {
  return nullptr;
}

// Puts Descriptors (SCM_RIGHTS) in Msg, using Control for them.
static void attachDescriptors(msghdr &Msg, char *Control, ArrayRef<int> Descriptors) {
  Msg.msg_control = Control;
  Msg.msg_controllen = CMSG_SPACE(sizeof(int) * Descriptors.size());
  cmsghdr *C = CMSG_FIRSTHDR(&Msg);
  C->cmsg_level = SOL_SOCKET;
  C->cmsg_type = SCM_RIGHTS;
  C->cmsg_len = CMSG_LEN(sizeof(int) * Descriptors.size());
  std::memcpy(CMSG_DATA(C), Descriptors.data(), sizeof(int) * Descriptors.size());
}

// Writes all of Iov (the caller's scratch: pieces are joined in it first),
// resuming after partial writes, and adds what went out to Written and to
// MovedOut (which others read as it grows); Descriptors (SCM_RIGHTS) go
// with the first byte. MSG_NOSIGNAL: a dead peer must surface as an error,
// not as SIGPIPE in the embedding process.
// Under a liveness timeout, SO_SNDTIMEO wakes a send that moves nothing
// every quarter of it (a slice); one that moved nothing for four slices in
// a row, while nothing arrived from the peer either, gives up with
// ETIMEDOUT: the peer takes no bytes and says nothing (a cut link, a
// stopped machine). A peer that is alive but not reading (its reader busy
// in a kernel) sends heartbeats meanwhile, so a quiet slice is one in
// which no read returned a byte.
int SocketTransport::sendAll(iovec *Iov, int Count, uint64_t &Written, ArrayRef<int> Descriptors) {
  alignas(cmsghdr) char Control[CMSG_SPACE(sizeof(int) * MaxDescriptors)];
  assert(Descriptors.size() <= MaxDescriptors && "the peer takes no more");
  unsigned QuietSlices = 0;
  uint64_t HeardBefore = Heard.load(std::memory_order_relaxed);
  Count = joinAdjacent(Iov, Count);
  while (Count > 0) {
    auto [Parts, Over] = stepOf(Iov, Count);
    msghdr Msg{};
    Msg.msg_iov = Iov;
    Msg.msg_iovlen = Parts;
    if (!Descriptors.empty())
      attachDescriptors(Msg, Control, Descriptors);
    Iov[Parts - 1].iov_len -= Over;
    ssize_t N = Tls ? Tls->write(Iov, Parts) : ::sendmsg(Fd, &Msg, MSG_NOSIGNAL);
    Iov[Parts - 1].iov_len += Over;
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 && timedOut(errno) && ReplyTimeoutMs.load() > 0) {
      uint64_t HeardNow = Heard.load(std::memory_order_relaxed);
      QuietSlices = HeardNow == HeardBefore ? QuietSlices + 1 : 0;
      HeardBefore = HeardNow;
      if (QuietSlices < SendSlices)
        continue;
      return ETIMEDOUT;
    }
    if (N < 0)
      return errno;
    QuietSlices = 0;
    Descriptors = {};
    Written += N;
    MovedOut.fetch_add(N, std::memory_order_relaxed);
    while (Count > 0 && static_cast<size_t>(N) >= Iov->iov_len) {
      N -= Iov->iov_len;
      ++Iov;
      --Count;
    }
    if (Count > 0) {
      Iov->iov_base = static_cast<char *>(Iov->iov_base) + N;
      Iov->iov_len -= N;
    }
  }
  return 0;
}

void SocketTransport::MiFree::operator()(char *P) const {
  mi_free(P);
}

Expected<std::unique_ptr<SocketTransport>>
SocketTransport::Create(SimpleRemoteEPCTransportClient &Client, int Fd, TransportOptions Opts,
                        SocketTransport **Created) {
  return Create(Client, Fd, std::move(Opts), nullptr, Created);
}

Expected<std::unique_ptr<SocketTransport>>
SocketTransport::Create(SimpleRemoteEPCTransportClient &Client, int Fd, TransportOptions Opts,
                        std::unique_ptr<TlsStream> Tls, SocketTransport **Created) {
  if (Fd < 0)
    return createStringError(inconvertibleErrorCode(), "invalid socket descriptor %d", Fd);
  if (Opts.MaxMessageSize < HeaderSize)
    return createStringError(inconvertibleErrorCode(), "message size limit %llu is below %zu",
                             (unsigned long long)Opts.MaxMessageSize, HeaderSize);
  if (Tls && (Tls->fd() != Fd || Opts.AcceptDescriptors))
    return createStringError(inconvertibleErrorCode(),
                             "a TLS stream must be over the transport's socket, which then "
                             "passes no descriptors");
  std::unique_ptr<SocketTransport> T(new SocketTransport(Client, Fd, Opts, std::move(Tls)));
  if (Created)
    *Created = T.get();
  return T;
}

SocketTransport::~SocketTransport() {
  disconnect();
  if (Reader.joinable())
    Reader.join();
  ::close(Fd);
}

Error SocketTransport::start() {
  if (Opts.ReadAfterFirstSend)
    ReaderDeferred = true;
  else
    startReader();
  return Error::success();
}

void SocketTransport::startReader() {
  Reader = std::thread([this] {
    if (Opts.OnReaderStart)
      Opts.OnReaderStart();
    readLoop();
  });
}

Error SocketTransport::sendMessage(SimpleRemoteEPCOpcode OpC, uint64_t SeqNo, ExecutorAddr TagAddr,
                                   ArrayRef<char> ArgBytes) {
  uint64_t MsgSize = HeaderSize + ArgBytes.size();
  if (MsgSize > Opts.MaxMessageSize)
    return createStringError(inconvertibleErrorCode(),
                             "message of %llu bytes exceeds the limit of %llu bytes",
                             (unsigned long long)MsgSize, (unsigned long long)Opts.MaxMessageSize);
  char Header[HeaderSize];
  encodeHeader(Header, MsgSize, OpC, SeqNo, TagAddr);
  iovec Iov[2] = {{Header, HeaderSize}, {const_cast<char *>(ArgBytes.data()), ArgBytes.size()}};

  bool Call = OpC == SimpleRemoteEPCOpcode::CallWrapper;
  if (Call && Opts.ReadOnDemand) {
    std::lock_guard<std::mutex> Lock(StateMutex);
    if (++RepliesDue == 1 && Claims == 0)
      StateChanged.notify_one();
  }
  if (auto Err = sendFrame(Iov, ArgBytes.empty() ? 1 : 2, MsgSize, Call))
    return Err;
  if (ReaderDeferred.exchange(false))
    startReader();
  return Error::success();
}

Error SocketTransport::sendFrame(iovec *Iov, int Count, uint64_t MsgSize, bool Call) {
  std::lock_guard<std::mutex> Lock(SendMutex);
  if (Disconnected)
    return createStringError(inconvertibleErrorCode(), "connection already closed");
  // Counted before the bytes go: a launch that snapshots the counters after
  // this call started must not be charged for it.
  if (Call)
    Requests.fetch_add(1, std::memory_order_relaxed);
  if (!beginSend(MsgSize))
    return goingDown();
  uint64_t Written = 0;
  int Err = sendAll(Iov, Count, Written);
  endSend(Written);
  if (Err)
    return lostWhileSending("sending a message", Err, Written, MsgSize);
  ++FramesOut;
  Sent.fetch_add(1, std::memory_order_relaxed);
  BytesOut.fetch_add(MsgSize, std::memory_order_relaxed);
  return Error::success();
}

void SocketTransport::disconnect() {
  if (Disconnected.exchange(true))
    return;
  {
    std::lock_guard<std::mutex> Lock(StateMutex);
    Ended = true;
  }
  StateChanged.notify_all();
  // Wakes the reader: its blocked read returns end-of-file.
  ::shutdown(Fd, SHUT_RDWR);
}

std::string SocketTransport::hangupReason() const {
  std::lock_guard<std::mutex> Lock(HangupMutex);
  return Hangup;
}

// A read, and on a transport that accepts them, the descriptors that came
// with the bytes (whichever read consumes a message's first byte gets
// those sent with it).
ssize_t SocketTransport::receive(iovec *Iov, int Count) {
  if (Tls)
    return Tls->read(Iov, Count);
  if (!Opts.AcceptDescriptors)
    return ::readv(Fd, Iov, Count);
  alignas(cmsghdr) char Control[CMSG_SPACE(sizeof(int) * MaxDescriptors)];
  msghdr M{};
  M.msg_iov = Iov;
  M.msg_iovlen = Count;
  M.msg_control = Control;
  M.msg_controllen = sizeof(Control);
  ssize_t N = ::recvmsg(Fd, &M, MSG_CMSG_CLOEXEC);
  if (N >= 0)
    keepDescriptors(M);
  return N;
}

// Descriptors beyond MaxDescriptors were closed by the kernel (MSG_CTRUNC);
// those that fit are kept for the handler, within the same bound.
void SocketTransport::keepDescriptors(msghdr &M) {
  TooManyPassed |= (M.msg_flags & MSG_CTRUNC) != 0;
  for (cmsghdr *C = CMSG_FIRSTHDR(&M); C; C = CMSG_NXTHDR(&M, C)) {
    if (C->cmsg_level != SOL_SOCKET || C->cmsg_type != SCM_RIGHTS)
      continue;
    size_t N = (C->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t I = 0; I < N; ++I) {
      int D;
      std::memcpy(&D, CMSG_DATA(C) + I * sizeof(int), sizeof(int));
      Passed.push_back(D);
    }
  }
  TooManyPassed |= Passed.size() > MaxDescriptors;
}

Error SocketTransport::tooManyDescriptors() {
  return createStringError(inconvertibleErrorCode(),
                           "the peer passed more than %zu descriptors with one message",
                           MaxDescriptors);
}

void SocketTransport::closeDescriptors() {
  for (int D : Passed)
    ::close(D);
  Passed.clear();
}

std::vector<int> SocketTransport::takeDescriptors() {
  return std::exchange(Passed, {});
}

Error SocketTransport::readExact(char *Dst, size_t Size, bool *CleanEof) {
  size_t Done = 0;
  uint64_t Seen = MovedOut.load(std::memory_order_relaxed);
  while (Done < Size) {
    iovec Rest{Dst + Done, Size - Done};
    ssize_t N = receive(&Rest, 1);
    if (TooManyPassed)
      return tooManyDescriptors();
    if (N > 0) {
      Heard.fetch_add(1, std::memory_order_relaxed);
      Done += N;
      MovedIn.fetch_add(N, std::memory_order_relaxed);
      continue;
    }
    if (N < 0 && (errno == EINTR || (timedOut(errno) && peerTookBytes(Seen))))
      continue;
    if ((N == 0 || Disconnected) && Done == 0 && CleanEof) {
      *CleanEof = true;
      return Error::success();
    }
    if (N == 0)
      return createStringError(inconvertibleErrorCode(),
                               "connection closed by the peer in the middle of a message");
    return readFailed("reading from the connection", errno);
  }
  return Error::success();
}

bool SocketTransport::timedOut(int Errno) {
  return Errno == EAGAIN || Errno == EWOULDBLOCK;
}

// A read timed out: the peer said nothing for the liveness timeout. It is
// alive still if it took bytes of ours meanwhile, a long request on its way
// (the reply is due from when the request started). Seen is the bytes
// sent when the reader last looked.
bool SocketTransport::peerTookBytes(uint64_t &Seen) const {
  uint64_t Now = MovedOut.load(std::memory_order_relaxed);
  bool Took = Now != Seen;
  Seen = Now;
  return Took;
}

// SO_RCVTIMEO ends a blocking read with EAGAIN: the peer said nothing, nor
// took anything of ours, for the whole reply timeout. The reader ends the
// connection on any error; the reason is kept for whoever asks why
// (closeReason()).
Error SocketTransport::readFailed(const char *What, int Errno) {
  if (Tls && Tls->failure() != TlsFailure::None)
    return tlsFailed(What);
  if (!timedOut(Errno))
    return sysError(What, Errno);
  std::string Why = formatv("the executor stopped answering: nothing arrived for {0} ms while a "
                            "reply was due (the liveness timeout); this end closed the connection",
                            ReplyTimeoutMs.load())
                        .str();
  noteClosed(Why);
  return createStringError(std::error_code(ETIMEDOUT, std::generic_category()), Why);
}

Error SocketTransport::readHeartbeat(Head &H, uint64_t MsgSize) {
  if (MsgSize != HeaderSize)
    return createStringError(inconvertibleErrorCode(), "peer sent a heartbeat of %llu bytes",
                             (unsigned long long)MsgSize);
  if (!H.Consumed)
    if (auto Err = readExact(H.Bytes, HeaderSize, nullptr))
      return Err;
  ++FramesIn;
  Heartbeats.fetch_add(1, std::memory_order_relaxed);
  return Error::success();
}

void SocketTransport::setReplyTimeout(std::chrono::milliseconds Timeout) {
  ReplyTimeoutMs = Timeout.count();
  // Zero (no timeout) stays zero; a timeout too short to slice gets 1 us.
  auto Slice = std::chrono::duration_cast<std::chrono::microseconds>(Timeout) / SendSlices;
  auto Send = Timeout.count() > 0 ? std::max(Slice, std::chrono::microseconds(1))
                                  : std::chrono::microseconds(0);
  if (Tls) {
    Tls->setReadTimeout(Timeout);
    Tls->setSendTimeout(Send);
    return;
  }
  setReadTimeout(Fd, Timeout);
  setSendTimeout(Fd, Send);
}

void SocketTransport::clearReadTimeout() {
  if (Tls)
    Tls->setReadTimeout(std::chrono::microseconds(0));
  else
    wire::clearReadTimeout(Fd);
}

bool SocketTransport::readable() {
  if (Tls)
    return Tls->readable();
  pollfd P{Fd, POLLIN, 0};
  return ::poll(&P, 1, 0) > 0;
}

std::string SocketTransport::protection() const {
  return Tls ? Tls->description() : std::string("plain");
}

// A TLS record failed, or the peer ended TLS with an alert: name it, and
// tampering where that is what it means.
Error SocketTransport::tlsFailed(const char *What) {
  std::string Said = Tls->failureText();
  std::string Why;
  switch (Tls->failure()) {
  case TlsFailure::Tampered:
    Why = formatv("{0}: a TLS record from the peer failed authentication: its bytes were "
                  "altered or injected on the way (tampering), or they do not come from the "
                  "peer that authenticated; this end closed the connection ({1})",
                  What, Said)
              .str();
    break;
  case TlsFailure::TamperedThere:
    Why = formatv("{0}: the peer ended TLS with an alert saying that what reached it was not "
                  "this end's records: bytes were altered or injected on the way (tampering) "
                  "({1})",
                  What, Said)
              .str();
    break;
  case TlsFailure::PeerAlert:
    Why = formatv("{0}: the peer ended TLS with an alert ({1})", What, Said).str();
    break;
  default:
    Why = formatv("{0}: TLS failed: {1}", What, Said).str();
    break;
  }
  noteClosed(Why);
  return createStringError(std::error_code(EBADMSG, std::generic_category()), Why);
}

// A frame that is a header alone (a heartbeat, a doorbell), under SendMutex.
Error SocketTransport::sendBareFrame(uint64_t OpC, const char *What) {
  char Header[HeaderSize];
  encodeHeader(Header, HeaderSize, static_cast<SimpleRemoteEPCOpcode>(OpC), 0, ExecutorAddr());
  iovec Iov{Header, HeaderSize};
  if (!beginSend(HeaderSize))
    return goingDown();
  uint64_t Written = 0;
  int Err = sendAll(&Iov, 1, Written);
  endSend(Written);
  return Err ? lostWhileSending(What, Err, Written, HeaderSize) : Error::success();
}

Error SocketTransport::sendHeartbeat() {
  std::lock_guard<std::mutex> Lock(SendMutex);
  if (Disconnected)
    return createStringError(inconvertibleErrorCode(), "connection already closed");
  if (auto Err = sendBareFrame(HeartbeatOpcode, "sending a heartbeat"))
    return Err;
  ++FramesOut;
  Heartbeats.fetch_add(1, std::memory_order_relaxed);
  return Error::success();
}

// Spoke says whether a byte arrived, rather than the end of the stream.
Error SocketTransport::waitForFirstMessage(bool &Spoke) {
  Spoke = false;
  if (!Opts.OnFirstMessage)
    return Error::success();
  if (Tls) {
    char Byte;
    ssize_t N = Tls->peek(&Byte, 1, true);
    Spoke = N == 1;
    if (N < 0 && Tls->failure() != TlsFailure::None)
      return tlsFailed("waiting for the peer's first message");
    return Error::success();
  }
  pollfd P{Fd, POLLIN, 0};
  for (;;) {
    char Byte;
    if (::poll(&P, 1, -1) > 0) {
      Spoke = ::recv(Fd, &Byte, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
      return Error::success();
    }
    if (errno != EINTR)
      return sysError("waiting for the peer's first message", errno);
  }
}

// Looks until something arrives or the spin is over, yielding between
// looks: a thread waiting for this CPU (the peer itself, when both run on
// one) goes first.
void SocketTransport::spinForMessage() {
  auto Until = std::chrono::steady_clock::now() + Opts.Spin;
  while (!readable() && std::chrono::steady_clock::now() < Until)
    ::sched_yield();
}

// Peeks at the next message: one recv shows its header and, for a small
// one, its plan, so that a single readv can then consume header, plan and
// payload, the payload straight into place. What is visible may be short
// of a header (completeHead).
Error SocketTransport::readHead(Head &H, bool &Eof) {
  uint64_t Seen = MovedOut.load(std::memory_order_relaxed);
  for (;;) {
    ssize_t N = Tls ? Tls->peek(H.Bytes, sizeof(H.Bytes), true)
                    : ::recv(Fd, H.Bytes, sizeof(H.Bytes), MSG_PEEK);
    if (N > 0) {
      Heard.fetch_add(1, std::memory_order_relaxed);
      H.Visible = N;
      return Error::success();
    }
    if (N == 0 || (N < 0 && Disconnected)) {
      Eof = true;
      return Error::success();
    }
    if (N < 0 && (errno == EINTR || (timedOut(errno) && peerTookBytes(Seen))))
      continue;
    return readFailed("reading from the connection", errno);
  }
}

// Only part of a header has arrived: wait for the rest by reading it.
Error SocketTransport::completeHead(Head &H) {
  if (H.Visible >= HeaderSize)
    return Error::success();
  H.Consumed = true;
  return readExact(H.Bytes, HeaderSize, nullptr);
}

// Spins up to Opts.Spin for a message in the mailbox or a byte on the
// socket; when neither came, says in the mailbox that this end sleeps on
// the socket, then looks once more. True when a mailbox message is to be
// taken now; false when the socket has (or will have) what comes next.
Expected<bool> SocketTransport::awaitMail(Mailbox &B) {
  auto Until = std::chrono::steady_clock::now() + Opts.Spin;
  pollfd P{Fd, POLLIN, 0};
  for (;;) {
    auto S = B.look(FramesIn);
    if (!S)
      return S.takeError();
    if (*S != Mailbox::State::Empty)
      return *S == Mailbox::State::Ready;
    if (::poll(&P, 1, 0) != 0)
      return false;
    if (std::chrono::steady_clock::now() >= Until)
      break;
    ::sched_yield();
  }
  B.setAsleep(true);
  Asleep = true;
  auto S = B.look(FramesIn);
  if (!S)
    return S.takeError();
  return *S == Mailbox::State::Ready;
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
  if (MsgSize != HeaderSize || !Box.load())
    return createStringError(inconvertibleErrorCode(), "peer rang a doorbell of %llu bytes%s",
                             (unsigned long long)MsgSize,
                             Box.load() ? "" : " with no shared mailbox open");
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
    closeWith("a message was posted to the shared mailbox, but the peer could not be woken");
  return Err;
}

Error SocketTransport::attachMailbox(std::unique_ptr<Mailbox> B, bool PeerReads) {
  std::lock_guard<std::mutex> Lock(SendMutex);
  if (OwnedBox)
    return createStringError(inconvertibleErrorCode(), "the session has a shared mailbox already");
  OwnedBox = std::move(B);
  PostToPeer.store(PeerReads, std::memory_order_relaxed);
  Box.store(OwnedBox.get(), std::memory_order_release);
  return Error::success();
}

// Whatever descriptors came with the message and were not taken while it
// was handled are closed once it is.
Error SocketTransport::readMessage(bool &Eof) {
  scope_exit Leftovers([this] { closeDescriptors(); });
  Mailbox *B = Box.load(std::memory_order_acquire);
  if (B) {
    auto Mail = awaitMail(*B);
    if (!Mail)
      return Mail.takeError();
    if (*Mail)
      return readMail(*B);
  } else if (Opts.Spin.count() > 0) {
    spinForMessage();
  }
  Head H;
  Error Peeked = readHead(H, Eof);
  if (B)
    wake(*B);
  if (Peeked)
    return Peeked;
  // A message posted before the bytes just seen were sent goes first; so
  // does one posted before the peer hung up.
  if (B) {
    auto S = B->look(FramesIn);
    if (!S)
      return S.takeError();
    if (*S == Mailbox::State::Ready) {
      Eof = false;
      return readMail(*B);
    }
  }
  if (Eof)
    return Error::success();
  if (auto Err = completeHead(H))
    return Err;
  uint64_t MsgSize = support::endian::read64le(H.Bytes);
  uint64_t OpC = support::endian::read64le(H.Bytes + 8);
  uint64_t Limit = Opts.MaxMessageSize;
  if (!ReadOne && Opts.FirstMessageLimit)
    Limit = std::min(Limit, Opts.FirstMessageLimit);
  if (MsgSize < HeaderSize || MsgSize > Limit) {
    Refused = MsgSize;
    return createStringError(inconvertibleErrorCode(),
                             "peer announced a%s message of %llu bytes; the limit is %llu",
                             Limit < Opts.MaxMessageSize ? " first" : "",
                             (unsigned long long)MsgSize, (unsigned long long)Limit);
  }
  if (isPayloadOpcode(OpC))
    return readPayloadMessage(H, MsgSize);
  if (OpC == HeartbeatOpcode)
    return readHeartbeat(H, MsgSize);
  if (OpC == DoorbellOpcode)
    return readDoorbell(H, MsgSize);
  if (OpC > static_cast<uint64_t>(SimpleRemoteEPCOpcode::LastOpC))
    return createStringError(inconvertibleErrorCode(), "peer sent unknown opcode %llu",
                             (unsigned long long)OpC);
  auto Args = shared::WrapperFunctionBuffer::allocate(MsgSize - HeaderSize);
  SmallVector<iovec, 8> Iov;
  if (!H.Consumed)
    Iov.push_back({H.Bytes, HeaderSize});
  if (Args.size())
    Iov.push_back({Args.data(), Args.size()});
  if (auto Err = readInto(Iov))
    return Err;
  ++FramesIn;
  Received.fetch_add(1, std::memory_order_relaxed);
  BytesIn.fetch_add(MsgSize, std::memory_order_relaxed);
  auto Op = static_cast<SimpleRemoteEPCOpcode>(OpC);
  noteHangup(Op, Args);
  auto Action =
      Client.handleMessage(Op, support::endian::read64le(H.Bytes + 16),
                           ExecutorAddr(support::endian::read64le(H.Bytes + 24)), std::move(Args));
  // After the handler, which hands the reply to its waiter or queues its
  // completion: whoever sees no reply due also sees the work it started.
  if (Op == SimpleRemoteEPCOpcode::Result && Opts.ReadOnDemand) {
    std::lock_guard<std::mutex> Lock(StateMutex);
    RepliesDue -= RepliesDue > 0;
  }
  if (!Action)
    return Action.takeError();
  Eof = *Action == SimpleRemoteEPCTransportClient::EndSession;
  return Error::success();
}

// A peer that closed may have said why first, in a Hangup frame this end
// has not read (a Unix socket fails the next send at once, before any read
// sees it). Peeks at it without consuming anything, so that whoever reads
// the socket still finds what is there; only a whole Hangup frame at the
// head of what is waiting counts.
void SocketTransport::peekHangup() {
  auto Peek = [this](char *Dst, size_t Size) {
    return Tls ? Tls->peek(Dst, Size, false) : ::recv(Fd, Dst, Size, MSG_PEEK | MSG_DONTWAIT);
  };
  char Head[HeaderSize];
  if (Peek(Head, HeaderSize) != ssize_t(HeaderSize))
    return;
  uint64_t Size = support::endian::read64le(Head);
  uint64_t OpC = support::endian::read64le(Head + 8);
  if (OpC != uint64_t(SimpleRemoteEPCOpcode::Hangup) || Size < HeaderSize || Size > MaxHangupFrame)
    return;
  std::vector<char> Frame(Size);
  if (Peek(Frame.data(), Size) != ssize_t(Size))
    return;
  auto Args = shared::WrapperFunctionBuffer::copyFrom(Frame.data() + HeaderSize, Size - HeaderSize);
  noteHangup(SimpleRemoteEPCOpcode::Hangup, Args);
}

void SocketTransport::noteHangup(SimpleRemoteEPCOpcode OpC,
                                 const shared::WrapperFunctionBuffer &Args) {
  if (OpC != SimpleRemoteEPCOpcode::Hangup)
    return;
  using Ser = shared::SPSArgList<shared::SPSError>;
  if (!spsWellFormed<Ser>(Args.data(), Args.size()))
    return; // no reason that can be read: the hangup still ends the session
  shared::detail::SPSSerializableError Info;
  shared::SPSInputBuffer IB(Args.data(), Args.size());
  // Quoted and cleaned whoever sent it: without a secret the executor
  // never proved who it is, and even one that did writes to the host's
  // terminal through this.
  if (Ser::deserialize(IB, Info) && Info.HasError) {
    std::string Quoted = quotePeerText(Info.ErrMsg);
    std::lock_guard<std::mutex> Lock(HangupMutex);
    Hangup = std::move(Quoted);
  }
}

// One step of the host's reader thread: read a message when an EPC reply is
// due and no caller reads its own; otherwise wake now and then to notice a
// hangup or the end of the connection.
Error SocketTransport::readOnDemand(bool &Eof) {
  bool Due;
  {
    std::unique_lock<std::mutex> Lock(StateMutex);
    StateChanged.wait_for(Lock, Opts.IdleCheck,
                          [this] { return Ended || (RepliesDue > 0 && Claims == 0); });
    if (Ended) {
      Eof = EndError.empty();
      return Eof ? Error::success() : createStringError(inconvertibleErrorCode(), EndError);
    }
    Due = RepliesDue > 0 && Claims == 0;
  }
  std::lock_guard<std::mutex> Lock(ReadMutex);
  if (!Due && !readable())
    return Error::success();
  return readMessage(Eof);
}

// A caller met the end of the connection: leave it to the reader thread.
void SocketTransport::endReading(Error Err) {
  {
    std::lock_guard<std::mutex> Lock(StateMutex);
    if (!Ended)
      EndError = Err ? toString(std::move(Err)) : std::string();
    else
      consumeError(std::move(Err)); // the end came first and was said; this follows from it
  }
  disconnect();
}

void SocketTransport::readUntil(function_ref<bool()> Done) {
  assert(Opts.ReadOnDemand && "the reader thread reads everything otherwise");
  ++Claims;
  {
    std::lock_guard<std::mutex> Lock(ReadMutex);
    bool Eof = false;
    while (!Eof && !Disconnected && !Done()) {
      Error Err = readMessage(Eof);
      if (Err || Eof)
        endReading(std::move(Err));
    }
  }
  // The reader thread waits for RepliesDue > 0 with no claims; senders wake
  // it when no one claims, the last claimer when replies are due.
  if (--Claims == 0 && RepliesDue > 0) {
    std::lock_guard<std::mutex> Lock(StateMutex);
    StateChanged.notify_one();
  }
}

// The peer announced a message too large to take. Tell it why before going,
// and take in (and drop) what it is still sending for a while: closing with
// unread data would reset the connection and lose the explanation.
// A peer that reset or closed the connection is gone for good, and after
// part of a message the peer would read whatever comes next as its rest: in
// both cases end the connection and say so to everyone who asks
// (disconnected(), closeReason()), not only to this sender. A send that
// failed before its first byte leaves the stream framed and the session up.
Error SocketTransport::lostWhileSending(const char *What, int Errno, uint64_t Written,
                                        uint64_t MsgSize) {
  if (Tls && Tls->failure() != TlsFailure::None) {
    Error Err = tlsFailed(What);
    disconnect();
    return Err;
  }
  if (Written == 0 && Errno != EPIPE && Errno != ECONNRESET && Errno != ETIMEDOUT)
    return sysError(What, Errno);
  if (Errno == EPIPE || Errno == ECONNRESET)
    peekHangup();
  std::string Why =
      Errno == ETIMEDOUT
          ? formatv("the executor stopped answering: it took none of the bytes of a message "
                    "({0}, {1} of {2} bytes sent) and sent nothing for {3} ms (the liveness "
                    "timeout); this end closed the connection",
                    What, Written, MsgSize, ReplyTimeoutMs.load())
                .str()
          : formatv("{0} failed after {1} of its {2} bytes: {3}; this end closed the connection",
                    What, Written, MsgSize, std::strerror(Errno))
                .str();
  noteClosed(Why);
  disconnect();
  return createStringError(std::error_code(Errno, std::generic_category()), Why);
}

// Senders take turns under SendMutex; the only other claimant is a crash
// handler (claimStream()), after which nothing may be sent.
// The mark says where the message ends before its first byte goes, so that
// whoever finds the stream cut can tell whether it went out whole.
bool SocketTransport::beginSend(uint64_t MsgSize) {
  bool Free = false;
  if (!Mark.Busy.compare_exchange_strong(Free, true, std::memory_order_acquire))
    return false;
  uint64_t Until =
      StreamBase == SendMark::Never ? SendMark::Never : StreamBase + Streamed + MsgSize;
  Mark.Until.store(Until, std::memory_order_release);
  return true;
}

void SocketTransport::endSend(uint64_t Written) {
  Streamed += Written;
  if (Mark.Counted.load(std::memory_order_relaxed) != SendMark::Never)
    Mark.Counted.store(StreamBase + Streamed, std::memory_order_release);
  Mark.Busy.store(false, std::memory_order_release);
}

void SocketTransport::waitUntilQuiet(std::chrono::milliseconds Limit) const {
  auto Until = std::chrono::steady_clock::now() + Limit;
  while (Mark.Busy.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < Until)
    ::sched_yield();
}

// A send that is never ended, nor ever complete.
bool SocketTransport::claimStream() {
  bool Free = false;
  if (!Mark.Busy.compare_exchange_strong(Free, true, std::memory_order_acquire))
    return false;
  Mark.Until.store(SendMark::Never, std::memory_order_release);
  return true;
}

bool SocketTransport::sendClaimed(StringRef Frame) {
  iovec V{const_cast<char *>(Frame.data()), Frame.size()};
  while (V.iov_len > 0) {
    ssize_t N = Tls ? Tls->write(&V, 1) : ::write(Fd, V.iov_base, V.iov_len);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    V.iov_base = static_cast<char *>(V.iov_base) + N;
    V.iov_len -= size_t(N);
  }
  return true;
}

Error SocketTransport::goingDown() {
  return createStringError(inconvertibleErrorCode(),
                           "the process is going down: a crash report holds the connection");
}

// The first reason this end gave for closing is the one that stands.
void SocketTransport::noteClosed(StringRef Why) {
  std::lock_guard<std::mutex> Lock(HangupMutex);
  if (Closed.empty())
    Closed = Why.str();
}

void SocketTransport::closeWith(StringRef Why) {
  noteClosed(Why);
  disconnect();
}

std::string SocketTransport::closeReason() const {
  std::lock_guard<std::mutex> Lock(HangupMutex);
  return Closed;
}

Error SocketTransport::refuse(Error Why) {
  std::string Reason = toString(std::move(Why));
  std::string Frame = encodeHangupFrame(Reason);
  {
    std::lock_guard<std::mutex> Lock(SendMutex);
    iovec V{Frame.data(), Frame.size()};
    uint64_t Written = 0;
    // Best effort: the peer may be gone already, and the connection ends
    // below whatever happens.
    (void)sendAll(&V, 1, Written);
  }
  ::shutdown(Fd, SHUT_WR);
  discardFor(Refused, std::chrono::seconds(5));
  return createStringError(inconvertibleErrorCode(), Reason);
}

void SocketTransport::discardFor(uint64_t Bytes, std::chrono::milliseconds Limit) {
  auto Deadline = std::chrono::steady_clock::now() + Limit;
  char Sink[64 * 1024];
  while (Bytes > 0) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
        Deadline - std::chrono::steady_clock::now());
    pollfd P{Fd, POLLIN, 0};
    if (Left.count() <= 0 ||
        (Tls ? !Tls->waitReadable(int(Left.count())) : ::poll(&P, 1, int(Left.count())) <= 0))
      return;
    iovec Into{Sink, size_t(std::min<uint64_t>(Bytes, sizeof(Sink)))};
    ssize_t N = Tls ? Tls->read(&Into, 1) : ::readv(Fd, &Into, 1);
    if (N <= 0)
      return;
    Bytes -= N;
  }
}

void SocketTransport::readLoop() {
  bool Spoke = false;
  Error Err = waitForFirstMessage(Spoke);
  if (!Err && Spoke && Opts.OnFirstMessage)
    Opts.OnFirstMessage();
  bool Eof = false;
  while (!Err && !Eof) {
    if (Opts.ReadOnDemand && Received.load() > 0) {
      Err = readOnDemand(Eof);
    } else {
      std::lock_guard<std::mutex> Lock(ReadMutex);
      Err = readMessage(Eof);
      if (!Err && !Eof && !ReadOne) {
        ReadOne = true;
        if (Opts.OnFirstMessageRead)
          Opts.OnFirstMessageRead();
      }
    }
  }
  if (Err && Refused)
    Err = refuse(std::move(Err));
  disconnect();
  if (PayloadHandler *H = Payloads.load())
    H->disconnected();
  Client.handleDisconnect(std::move(Err));
}

// Fills Dst (scratch, joined in place like a send's) from the socket.
Error SocketTransport::readInto(MutableArrayRef<iovec> Dst) {
  iovec *Iov = Dst.data();
  int Count = joinAdjacent(Dst.data(), Dst.size());
  uint64_t Seen = MovedOut.load(std::memory_order_relaxed);
  while (Count > 0) {
    ssize_t N = receive(Iov, std::min(Count, IOV_MAX));
    if (TooManyPassed)
      return tooManyDescriptors();
    if (N > 0)
      Heard.fetch_add(1, std::memory_order_relaxed);
    if (N < 0 && (errno == EINTR || (timedOut(errno) && peerTookBytes(Seen))))
      continue;
    if (N < 0)
      return readFailed("reading a payload", errno);
    if (N == 0)
      return createStringError(inconvertibleErrorCode(),
                               "connection closed by the peer in the middle of a payload");
    MovedIn.fetch_add(N, std::memory_order_relaxed);
    for (; Count > 0 && size_t(N) >= Iov->iov_len; ++Iov, --Count)
      N -= Iov->iov_len;
    if (Count > 0) {
      Iov->iov_base = static_cast<char *>(Iov->iov_base) + N;
      Iov->iov_len -= N;
    }
  }
  return Error::success();
}

// Reads a payload into its places, after what Iov holds: memory as it is,
// a sink's pieces chunk by chunk. A sink that refuses its bytes leaves its
// error in Refused, and the rest of its pieces are drained.
Error SocketTransport::readPlaced(SmallVectorImpl<iovec> &Iov, ArrayRef<iovec> Dst,
                                  PayloadHandler &Handler, Error &Refused) {
  for (size_t I = 0; I < Dst.size(); ++I) {
    if (Dst[I].iov_base || Dst[I].iov_len == 0) {
      Iov.push_back(Dst[I]);
      continue;
    }
    if (auto Err = readInto(Iov))
      return Err;
    Iov.clear();
    if (auto Err = readThrough(Handler.sinkFor(I), Dst[I].iov_len, Refused))
      return Err;
  }
  return readInto(Iov);
}

Error SocketTransport::readThrough(PayloadSink *Sink, uint64_t Bytes, Error &Refused) {
  if (!Sink && !Refused)
    Refused = createStringError(inconvertibleErrorCode(), "a payload piece has nowhere to go");
  while (Bytes > 0) {
    if (Refused)
      return drain(Bytes);
    MutableArrayRef<char> Buf = Sink->buffer();
    if (Buf.empty()) {
      Refused = createStringError(inconvertibleErrorCode(),
                                  "a payload piece's sink has no room for its next %llu bytes",
                                  (unsigned long long)Bytes);
      continue;
    }
    size_t N = size_t(std::min<uint64_t>(Bytes, Buf.size()));
    iovec One{Buf.data(), N}; // advanced by readInto as it fills
    if (auto Err = readInto({&One, 1}))
      return Err;
    Bytes -= N;
    if (auto Err = Sink->take(N))
      Refused = std::move(Err);
  }
  return Error::success();
}

// Consumes a payload nobody will take, so the stream stays framed.
Error SocketTransport::drain(uint64_t Bytes) {
  char Sink[64 * 1024];
  while (Bytes > 0) {
    size_t N = std::min<uint64_t>(Bytes, sizeof(Sink));
    if (auto Err = readExact(Sink, N, nullptr))
      return Err;
    Bytes -= N;
  }
  return Error::success();
}

// Reads a payload message's plan (from the peeked head when it is all
// there) and returns how many bytes of the message are still to consume
// before the payload: header and plan, when they were only peeked.
Expected<size_t> SocketTransport::readPlan(Head &H, uint64_t PlanSize,
                                           shared::WrapperFunctionBuffer &Plan) {
  Plan = shared::WrapperFunctionBuffer::allocate(PlanSize);
  if (!H.Consumed && HeaderSize + PlanSize <= H.Visible) {
    std::memcpy(Plan.data(), H.Bytes + HeaderSize, PlanSize);
    return HeaderSize + PlanSize;
  }
  if (!H.Consumed)
    if (auto Err = readExact(H.Bytes, HeaderSize, nullptr))
      return Err;
  if (auto Err = readExact(Plan.data(), PlanSize, nullptr))
    return Err;
  return 0;
}

Error SocketTransport::readPayloadMessage(Head &H, uint64_t MsgSize) {
  PayloadHandler *Handler = Payloads.load();
  if (!Handler)
    return createStringError(inconvertibleErrorCode(),
                             "peer sent an out-of-line payload message, which was not enabled");
  uint64_t PlanSize = support::endian::read64le(H.Bytes + 24);
  if (PlanSize > MsgSize - HeaderSize || PlanSize > MaxPlanSize)
    return createStringError(inconvertibleErrorCode(), "peer announced a plan of %llu bytes",
                             (unsigned long long)PlanSize);
  shared::WrapperFunctionBuffer Plan;
  auto Prefix = readPlan(H, PlanSize, Plan);
  if (!Prefix)
    return Prefix.takeError();
  uint64_t PayloadBytes = MsgSize - HeaderSize - PlanSize;
  auto Op = static_cast<PayloadOpcode>(support::endian::read64le(H.Bytes + 8));
  uint64_t SeqNo = support::endian::read64le(H.Bytes + 16);
  auto Dst = Handler->place(Op, SeqNo, {Plan.data(), Plan.size()}, PayloadBytes);
  Error Placed = Dst ? Error::success() : Dst.takeError();
  uint64_t Total = 0;
  if (Dst)
    for (const iovec &V : *Dst)
      Total += V.iov_len;
  if (!Placed && Total != PayloadBytes)
    Placed =
        createStringError(inconvertibleErrorCode(), "payload of %llu bytes placed as %llu bytes",
                          (unsigned long long)PayloadBytes, (unsigned long long)Total);
  SmallVector<iovec, 8> Iov;
  if (*Prefix)
    Iov.push_back({H.Bytes, *Prefix});
  auto ReadAll = [&]() -> Error {
    if (!Placed)
      return readPlaced(Iov, *Dst, *Handler, Placed);
    if (auto Err = readInto(Iov))
      return Err;
    return drain(PayloadBytes);
  };
  Error Read = ReadAll();
  if (Read)
    return joinErrors(std::move(Placed), std::move(Read));
  ++FramesIn;
  Received.fetch_add(1, std::memory_order_relaxed);
  BytesIn.fetch_add(MsgSize, std::memory_order_relaxed);
  Handler->finish(Op, SeqNo, std::move(Plan), std::move(Placed));
  return Error::success();
}

int SocketTransport::sendParts(SmallVectorImpl<iovec> &Iov, ArrayRef<PayloadPart> Parts,
                               uint64_t &Written) {
  for (const PayloadPart &P : Parts) {
    if (!P.Packer) {
      if (P.Bytes)
        Iov.push_back({const_cast<char *>(P.Data), size_t(P.Bytes)});
      continue;
    }
    if (int Err = sendAll(Iov.data(), Iov.size(), Written))
      return Err;
    Iov.clear();
    uint64_t Lines = P.Packer->wholeLineBytes();
    size_t Size = Lines && P.Bytes <= MaxWholeChunkSize
                      ? size_t(P.Bytes)
                      : std::clamp<uint64_t>(Lines, ChunkSize, MaxChunkSize);
    if (ChunkBytes < Size) {
      Chunk.reset(static_cast<char *>(mi_malloc_aligned(Size, 64))); // lines, for streams
      ChunkBytes = Chunk ? Size : 0;
      if (!Chunk)
        return ENOMEM;
    }
    while (!P.Packer->done()) {
      iovec One{Chunk.get(), P.Packer->pack(Chunk.get(), ChunkBytes)};
      if (int Err = sendAll(&One, 1, Written))
        return Err;
    }
  }
  return sendAll(Iov.data(), Iov.size(), Written);
}

Error SocketTransport::sendWithPayload(PayloadOpcode OpC, uint64_t SeqNo, ArrayRef<char> Plan,
                                       ArrayRef<PayloadPart> Parts, ArrayRef<int> Descriptors) {
  assert((Descriptors.empty() || Parts.empty()) && "descriptors go with a plan alone");
  uint64_t MsgSize = HeaderSize + Plan.size();
  for (const PayloadPart &P : Parts)
    MsgSize += P.Bytes;
  if (MsgSize > Opts.MaxMessageSize)
    return createStringError(inconvertibleErrorCode(),
                             "message of %llu bytes exceeds the limit of %llu bytes",
                             (unsigned long long)MsgSize, (unsigned long long)Opts.MaxMessageSize);
  char Header[HeaderSize];
  encodeHeader(Header, MsgSize, static_cast<SimpleRemoteEPCOpcode>(OpC), SeqNo,
               ExecutorAddr(Plan.size()));
  SmallVector<iovec, 8> Iov = {{Header, HeaderSize}};
  if (!Plan.empty())
    Iov.push_back({const_cast<char *>(Plan.data()), Plan.size()});
  std::lock_guard<std::mutex> Lock(SendMutex);
  if (Disconnected)
    return createStringError(inconvertibleErrorCode(), "connection already closed");
  if (isLaunchOpcode(OpC))
    Requests.fetch_add(1, std::memory_order_relaxed);
  Mailbox *B = PostToPeer.load(std::memory_order_relaxed) ? Box.load() : nullptr;
  bool Wake = false;
  if (B && isMailOpcode(uint64_t(OpC)) && Parts.empty() && Descriptors.empty() &&
      B->post(uint64_t(OpC), SeqNo, Plan, FramesOut, Wake)) {
    Sent.fetch_add(1, std::memory_order_relaxed);
    BytesOut.fetch_add(MsgSize, std::memory_order_relaxed);
    return Wake ? ringDoorbell() : Error::success();
  }
  if (!beginSend(MsgSize))
    return goingDown();
  uint64_t Written = 0;
  int Err = Descriptors.empty() ? sendParts(Iov, Parts, Written)
                                : sendAll(Iov.data(), Iov.size(), Written, Descriptors);
  endSend(Written);
  if (Err)
    return lostWhileSending("sending a payload message", Err, Written, MsgSize);
  ++FramesOut;
  Sent.fetch_add(1, std::memory_order_relaxed);
  BytesOut.fetch_add(MsgSize, std::memory_order_relaxed);
  return Error::success();
}

std::string encodeHangupFrame(StringRef Message) {
  constexpr size_t HeaderSize = SocketTransport::HeaderSize;
  shared::detail::SPSSerializableError Info{true, Message.str()};
  using Ser = shared::SPSArgList<shared::SPSError>;
  std::string Frame(HeaderSize + Ser::size(Info), '\0');
  encodeHeader(Frame.data(), Frame.size(), SimpleRemoteEPCOpcode::Hangup, 0, ExecutorAddr());
  shared::SPSOutputBuffer OB(Frame.data() + HeaderSize, Frame.size() - HeaderSize);
  [[maybe_unused]] bool Ok = Ser::serialize(OB, Info);
  assert(Ok && "hangup frame sized by SPS itself");
  return Frame;
}

} // namespace catalyst::remote::wire
