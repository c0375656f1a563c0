//===- SocketTransport.cpp - EPC messages over one connection -------------===//
//
// The transport's core: starting, sending a message, the reader's loop,
// reading one message (peeked head, then straight into place), the
// host's reading on demand, and ending the connection. Payload messages,
// the shared mailbox and liveness are in SocketTransport*.cpp beside it;
// the bytes themselves go through ByteStream.
//
//===----------------------------------------------------------------------===//

#include "SocketTransport.h"

#include "HangupKind.h"
#include "PeerText.h"
#include "SpsCheck.h"
#include "SysError.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utility>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

namespace {

// A reason to hang up is a line of text: more is no reason.
constexpr uint64_t MaxHangupFrame = 64 << 10;

// A message body up to this size is reserved whole when its header
// arrives; a larger one grows as it arrives (readBody).
constexpr uint64_t BodyStep = 1 << 20;

static_assert(SocketTransport::PeekSize >= SocketTransport::HeaderSize);

// A blocking send returns only once all it was given is queued: each call
// gets at most this much, so that bytesWritten() grows while a large message
// goes out. That is one system call more per MiB, small beside moving the
// MiB (launch/zerocopy/256MiB/1in/rank1 against its raw TCP exchange in
// benchmarks/TransferBench.cpp shows what it costs); and a step fits in
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

} // namespace

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
  unsigned QuietSlices = 0;
  uint64_t HeardBefore = Heard.load(std::memory_order_relaxed);
  Count = joinAdjacent(Iov, Count);
  while (Count > 0) {
    auto [Parts, Over] = stepOf(Iov, Count);
    Iov[Parts - 1].iov_len -= Over;
    ssize_t N = Stream.send(Iov, Parts, Descriptors);
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
  if (OpC == SimpleRemoteEPCOpcode::Result && Opts.BeforeReply)
    Opts.BeforeReply();
  if (Call && Opts.ReadOnDemand) {
    sync::MutexLock Lock(StateMutex);
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
  sync::MutexLock Lock(SendMutex);
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
    sync::MutexLock Lock(StateMutex);
    Ended = true;
  }
  StateChanged.notify_all();
  // Wakes the reader: its blocked read returns end-of-file.
  Stream.shutdown(SHUT_RDWR);
}

std::string SocketTransport::hangupReason() const {
  sync::MutexLock Lock(HangupMutex);
  return Hangup;
}

Error SocketTransport::tooManyDescriptors() {
  return createStringError(inconvertibleErrorCode(),
                           "the peer passed more than %zu descriptors with one message",
                           MaxDescriptors);
}

Error SocketTransport::readExact(char *Dst, size_t Size, bool *CleanEof) {
  size_t Done = 0;
  uint64_t Seen = MovedOut.load(std::memory_order_relaxed);
  while (Done < Size) {
    iovec Rest{Dst + Done, Size - Done};
    ssize_t N = Stream.receive(&Rest, 1);
    if (Stream.tooManyDescriptors())
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

// Spoke says whether a byte arrived, rather than the end of the stream.
Error SocketTransport::waitForFirstMessage(bool &Spoke) {
  Spoke = false;
  if (!Opts.OnFirstMessage)
    return Error::success();
  for (;;) {
    char Byte;
    ssize_t N = Stream.peek(&Byte, 1, true);
    Spoke = N == 1;
    if (N >= 0 || (errno != EINTR && errno != EAGAIN))
      break;
  }
  if (!Spoke && tlsFailedHere())
    return tlsFailed("waiting for the peer's first message");
  return Error::success();
}

// Looks until something arrives or the spin is over, yielding between
// looks: a thread waiting for this CPU (the peer itself, when both run on
// one) goes first.
void SocketTransport::spinForMessage() {
  auto Until = std::chrono::steady_clock::now() + Opts.Spin;
  while (!Stream.readable() && std::chrono::steady_clock::now() < Until)
    ::sched_yield();
}

// Peeks at the next message: one recv shows its header and, for a small
// one, its plan, so that a single readv can then consume header, plan and
// payload, the payload straight into place. What is visible may be short
// of a header (completeHead).
Error SocketTransport::readHead(Head &H, bool &Eof) {
  uint64_t Seen = MovedOut.load(std::memory_order_relaxed);
  for (;;) {
    ssize_t N = Stream.peek(H.Bytes, sizeof(H.Bytes), true);
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

// Whatever descriptors came with the message and were not taken while it
// was handled are closed once it is.
Error SocketTransport::readMessage(bool &Eof) {
  scope_exit Leftovers([this] { Stream.closeDescriptors(); });
  Mailbox *B = Mail.load(std::memory_order_acquire);
  if (B) {
    auto Ready = awaitMail(*B);
    if (!Ready)
      return Ready.takeError();
    if (*Ready)
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
    auto S = B->look(FramesIn, [this] { return bytesWaiting(); });
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
  // ORC's host takes a Setup message as the answer to its call 0, which
  // only the first message is: a second would be handed a pending call
  // that is not there.
  if (OpC == uint64_t(SimpleRemoteEPCOpcode::Setup) && Received.load() > 0)
    return protocolError("the peer sent a Setup message (opcode 0) after its first message; "
                         "a session is set up once");
  shared::WrapperFunctionBuffer Args;
  if (auto Err = readBody(H, MsgSize - HeaderSize, Args))
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
    sync::MutexLock Lock(StateMutex);
    RepliesDue -= RepliesDue > 0;
  }
  if (!Action)
    return Action.takeError();
  Eof = *Action == SimpleRemoteEPCTransportClient::EndSession;
  return Error::success();
}

// Reads the message's Bytes after its header (and the header, when it was
// only peeked) into Out. A large body goes into memory that grows as its
// bytes arrive, at most twice what came so far and BodyStep: a header
// alone announcing gigabytes makes this end reserve nothing large.
Error SocketTransport::readBody(Head &H, uint64_t Bytes, shared::WrapperFunctionBuffer &Out) {
  SmallVector<iovec, 2> Iov;
  if (!H.Consumed)
    Iov.push_back({H.Bytes, HeaderSize});
  if (Bytes <= BodyStep) {
    Out = shared::WrapperFunctionBuffer::allocate(Bytes);
    if (Bytes)
      Iov.push_back({Out.data(), Out.size()});
    return readInto(Iov);
  }
  char *Body = nullptr;
  scope_exit FreeBody([&Body] { std::free(Body); });
  for (uint64_t Filled = 0; Filled < Bytes;) {
    uint64_t Grown = std::min<uint64_t>(Bytes, std::max<uint64_t>(BodyStep, 2 * Filled));
    char *Moved = static_cast<char *>(std::realloc(Body, Grown));
    if (!Moved)
      return createStringError(inconvertibleErrorCode(),
                               "cannot reserve %llu bytes for a message of %llu from the peer",
                               (unsigned long long)Grown, (unsigned long long)Bytes);
    Body = Moved;
    Iov.push_back({Body + Filled, size_t(Grown - Filled)});
    if (auto Err = readInto(Iov))
      return Err;
    Iov.clear();
    Filled = Grown;
  }
  // A WrapperFunctionBuffer frees with free() what it holds out of line,
  // as any body over BodyStep is.
  shared::CWrapperFunctionBuffer Whole;
  Whole.Data.ValuePtr = std::exchange(Body, nullptr);
  Whole.Size = size_t(Bytes);
  Out = shared::WrapperFunctionBuffer(Whole);
  return Error::success();
}

// A message no honest peer sends: the connection ends, and whoever asks
// why is told (closeReason()).
Error SocketTransport::protocolError(const Twine &Why) {
  std::string Said = Why.str() + "; this end closed the connection";
  noteClosed(Said, FailureKind::Other);
  return createStringError(std::error_code(EPROTO, std::generic_category()), Said);
}

// A peer that closed may have said why first, in a Hangup frame this end
// has not read (a Unix socket fails the next send at once, before any read
// sees it). Peeks at it without consuming anything, so that whoever reads
// the socket still finds what is there; only a whole Hangup frame at the
// head of what is waiting counts.
void SocketTransport::peekHangup() {
  auto Peek = [this](char *Dst, size_t Size) { return Stream.peek(Dst, Size, false); };
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
    FailureKind Kind = hangupKind(Info.ErrMsg, FailureKind::ExecutorLost);
    sync::MutexLock Lock(HangupMutex);
    Hangup = std::move(Quoted);
    HangupKind = Kind;
  }
}

// One step of the host's reader thread: read a message when an EPC reply is
// due and no caller reads its own; otherwise wake now and then to notice a
// hangup or the end of the connection.
Error SocketTransport::readOnDemand(bool &Eof) {
  bool Due;
  {
    sync::UniqueLock Lock(StateMutex);
    StateChanged.wait_for(Lock, Opts.IdleCheck, [this]() REQUIRES(StateMutex) {
      return Ended || (RepliesDue > 0 && Claims == 0);
    });
    if (Ended) {
      Eof = EndError.empty();
      return Eof ? Error::success() : createStringError(inconvertibleErrorCode(), EndError);
    }
    Due = RepliesDue > 0 && Claims == 0;
  }
  sync::MutexLock Lock(ReadMutex);
  if (!Due && !Stream.readable())
    return Error::success();
  return readMessage(Eof);
}

// A caller met the end of the connection: leave it to the reader thread.
void SocketTransport::endReading(Error Err) {
  {
    sync::MutexLock Lock(StateMutex);
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
    sync::MutexLock Lock(ReadMutex);
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
    sync::MutexLock Lock(StateMutex);
    StateChanged.notify_one();
  }
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
    ssize_t N = Stream.send(&V, 1);
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
void SocketTransport::noteClosed(StringRef Why, FailureKind Kind) {
  sync::MutexLock Lock(HangupMutex);
  if (!Closed.empty())
    return;
  Closed = Why.str();
  ClosedKind = Kind;
}

void SocketTransport::closeWith(StringRef Why, FailureKind Kind) {
  noteClosed(Why, Kind);
  disconnect();
}

std::string SocketTransport::closeReason() const {
  sync::MutexLock Lock(HangupMutex);
  return Closed;
}

FailureKind SocketTransport::endKind() const {
  sync::MutexLock Lock(HangupMutex);
  if (!Hangup.empty())
    return HangupKind;
  return Closed.empty() ? FailureKind::ExecutorLost : ClosedKind;
}

Error SocketTransport::refuse(Error Why) {
  std::string Reason = toString(std::move(Why));
  std::string Frame = encodeHangupFrame(Reason);
  {
    sync::MutexLock Lock(SendMutex);
    iovec V{Frame.data(), Frame.size()};
    uint64_t Written = 0;
    // Best effort: the peer may be gone already, and the connection ends
    // below whatever happens.
    (void)sendAll(&V, 1, Written);
  }
  Stream.shutdown(SHUT_WR);
  discardFor(Refused, std::chrono::seconds(5));
  return createStringError(inconvertibleErrorCode(), Reason);
}

void SocketTransport::discardFor(uint64_t Bytes, std::chrono::milliseconds Limit) {
  auto Deadline = std::chrono::steady_clock::now() + Limit;
  char Sink[64 * 1024];
  while (Bytes > 0) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
        Deadline - std::chrono::steady_clock::now());
    if (Left.count() <= 0 || !Stream.waitReadable(int(Left.count())))
      return;
    iovec Into{Sink, size_t(std::min<uint64_t>(Bytes, sizeof(Sink)))};
    ssize_t N = Stream.receive(&Into, 1);
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
      sync::MutexLock Lock(ReadMutex);
      Err = readMessage(Eof);
      if (!Err && !Eof && !ReadOne && Received.load() > 0) {
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

} // namespace catalyst::remote::wire
