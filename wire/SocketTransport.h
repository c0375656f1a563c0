//===- SocketTransport.h - ORC EPC framing over one socket ------*- C++ -*-===//
//
// Both ends of a session speak ORC's SimpleRemoteEPC framing (a 32-byte
// little-endian header, then the argument bytes) over one connected socket:
// TCP, or the executor's local Unix socket, beside which a session may
// attach a mailbox in shared memory for small messages. LLVM's stock FD
// transport writes header and payload in two writes, which stalls on
// delayed ACKs over TCP; this one sends a message with a single writev (a
// large one 1 MiB at a time), bounds the size a peer may announce, and
// can time out a peer that never sends its first message. The bytes go
// through a ByteStream: the socket itself, or TLS records on it.
//
// Its work is spread by job: SocketTransport.cpp (sending a message, the
// reader, reading a message, ending), SocketTransportPayloads.cpp
// (out-of-line payloads), SocketTransportMail.cpp (the shared mailbox) and
// SocketTransportLiveness.cpp (reply timeouts, heartbeats, the errors that
// say why a connection ended).
//
// Threads: the reader thread (started by start(), or by the first send
// with ReadAfterFirstSend) runs readLoop() and every payload handler and
// client callback; on the host (ReadOnDemand) a caller waiting for its
// reply reads in its place (readUntil()), one reader at a time under
// ReadMutex. Senders are any thread (sendMessage(), sendWithPayload(),
// sendHeartbeat() from the executor's heartbeat thread), one at a time
// under SendMutex. disconnect(), closeWith(), the counters and the
// reasons are for any thread; the session's launch watchdog closes with
// closeWith(). claimStream() is a crash handler's, in a signal handler:
// lock-free; sendClaimed() then runs on the crash reporter's standby
// thread. docs/architecture.md lists which lock or thread owns each
// member.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SOCKETTRANSPORT_H
#define CATALYST_REMOTE_WIRE_SOCKETTRANSPORT_H

#include "ByteStream.h"
#include "Framing.h"
#include "Mailbox.h"
#include "MemrefLayout.h"
#include "SendMark.h"
#include "catalyst/remote/Failure.h"
#include "sync/Mutex.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/Shared/SimpleRemoteEPCUtils.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

struct iovec;

namespace catalyst::remote::wire {

struct TransportOptions {
  // Largest message, header included, that either side may send or accept.
  uint64_t MaxMessageSize = uint64_t(8) << 30;
  // The largest first message accepted from the peer, when a peer that has
  // proven nothing yet must not make this end reserve more (zero: no limit
  // beyond MaxMessageSize).
  uint64_t FirstMessageLimit = 0;
  // Runs on the reader thread once the peer's first message has been read
  // and handled whole: an EPC or payload message, not a heartbeat or a
  // doorbell, which prove nothing.
  std::function<void()> OnFirstMessageRead;
  // Whether the peer may send heartbeats. Only an executor does: the
  // executor's end refuses one from the host.
  bool PeerSendsHeartbeats = true;
  // The host's mode. Its peer speaks only when spoken to, so the reader
  // thread reads only while an EPC reply is due and no caller is reading its
  // own (readUntil); when idle it looks for a hangup every IdleCheck.
  bool ReadOnDemand = false;
  std::chrono::milliseconds IdleCheck{100};
  // Runs first on the reader thread (the executor prepares it for crashes).
  std::function<void()> OnReaderStart;
  // The executor's mode: the reader thread starts once the first message
  // (the EPC setup message) has gone out, not in start(). When that send
  // fails, ORC's SimpleRemoteEPCServer::Create returns the error and
  // destroys the server at once, its dispatcher before its transport: no
  // reader thread may be inside it then (one that saw the peer hang up
  // would be shutting the dispatcher down while it is destroyed).
  bool ReadAfterFirstSend = false;
  // Runs on the reader thread once the peer's first message is waiting,
  // before it is read: work that only a peer who spoke deserves. A peer
  // that hangs up without a word (a host that moved to the local socket)
  // never gets it.
  std::function<void()> OnFirstMessage;
  // Where the transport marks the message it is writing, when someone else
  // must read it (the executor's listener, after this process died, in
  // memory it shares); the transport's own otherwise.
  SendMark *Mark = nullptr;
  // Takes descriptors the peer passes (SCM_RIGHTS, a Unix socket only):
  // those of a message are the payload handler's for the taking while it
  // handles that message (takeDescriptors()); the rest are closed. Without
  // it the kernel drops any the peer sends.
  bool AcceptDescriptors = false;
  // How long to look for the next message without sleeping before a read
  // blocks for it; zero: block at once. Between two processes on one
  // machine a reply often comes within microseconds, while waking a thread
  // that sleeps costs tens (the CPU it slept on must be woken): a session
  // over the local socket spins a little on both sides.
  std::chrono::microseconds Spin{0};
  // Runs on the sending thread just before a reply to the peer's request
  // goes out (an EPC Result, a launch's result): the executor's heartbeat
  // then stops counting that thread's work as owed to the host
  // (executor/Heartbeat.h). Must not block or send.
  void (*BeforeReply)() = nullptr;
};

// Receives out-of-line payload messages; runs on the transport's reader.
// Takes a piece of an incoming payload chunk by chunk as it arrives,
// rather than having it land whole in one place.
class PayloadSink {
public:
  virtual ~PayloadSink();
  // Where the next chunk lands; the transport fills as much of it as the
  // piece has left.
  virtual llvm::MutableArrayRef<char> buffer() = 0;
  // The buffer's first Bytes hold the piece's next. An error makes the
  // transport drain the rest of the payload and pass it to finish().
  virtual llvm::Error take(size_t Bytes) = 0;
};

class PayloadHandler {
public:
  virtual ~PayloadHandler();
  // Where the PayloadBytes that follow Plan go, exactly: memory, or for a
  // piece with a null base, the sink sinkFor() gives for its index. An
  // error here makes the transport drain the payload and pass the error to
  // finish().
  virtual llvm::Expected<std::vector<iovec>>
  place(PayloadOpcode OpC, uint64_t SeqNo, llvm::ArrayRef<char> Plan, uint64_t PayloadBytes) = 0;
  virtual PayloadSink *sinkFor(size_t Piece);
  // The payload has landed, or was drained after Err.
  virtual void finish(PayloadOpcode OpC, uint64_t SeqNo,
                      llvm::orc::shared::WrapperFunctionBuffer Plan, llvm::Error Err) = 0;
  // The connection is gone: fail whatever waits on it.
  virtual void disconnected() = 0;
};

// One piece of an outgoing payload: memory sent as it is, or the values of
// a strided memref packed on the fly in bounded chunks.
struct PayloadPart {
  const char *Data = nullptr;
  uint64_t Bytes = 0;
  MemrefPacker *Packer = nullptr;
};

// What FirstMessageLimit is set to by an executor whose peers need not
// authenticate: the first message of a host (after the executor's setup
// message) is a small EPC call, well under this.
inline constexpr uint64_t MaxFirstMessage = 64 << 10;

class SocketTransport final : public llvm::orc::SimpleRemoteEPCTransport {
public:
  static constexpr size_t HeaderSize = FrameHeaderSize;
  // How much of a message's start is peeked at: a header and a typical plan.
  static constexpr size_t PeekSize = 1024;

  // Takes ownership of the connected socket Fd. The EPC classes own their
  // transport; Created, when given, receives a pointer to it.
  static llvm::Expected<std::unique_ptr<SocketTransport>>
  Create(llvm::orc::SimpleRemoteEPCTransportClient &Client, int Fd, TransportOptions Opts,
         SocketTransport **Created = nullptr);
  // The same over Tls, a TLS stream on Fd (TlsStream.h) that the transport
  // takes: every byte after the handshake then travels in TLS records.
  static llvm::Expected<std::unique_ptr<SocketTransport>>
  Create(llvm::orc::SimpleRemoteEPCTransportClient &Client, int Fd, TransportOptions Opts,
         std::unique_ptr<TlsStream> Tls, SocketTransport **Created = nullptr);

  ~SocketTransport() override;

  llvm::Error start() override;
  llvm::Error sendMessage(llvm::orc::SimpleRemoteEPCOpcode OpC, uint64_t SeqNo,
                          llvm::orc::ExecutorAddr TagAddr, llvm::ArrayRef<char> ArgBytes) override;
  void disconnect() override;

  // Installs the receiver of out-of-line payload messages; may be set after
  // start(), before the first such message can arrive.
  void setPayloadHandler(PayloadHandler *H) { Payloads.store(H); }

  // Reads and dispatches messages on the calling thread until Done() holds
  // or the connection ends; the reader thread stands aside meanwhile. A
  // caller waiting for one reply is then woken by the socket itself rather
  // than by a second thread, a wake-up less per round trip. ReadOnDemand only.
  void readUntil(llvm::function_ref<bool()> Done);

  // Sends Plan and then the Parts in order as one payload message, from the
  // caller's memory: scatter-gather for plain parts, a bounded scratch chunk
  // for packed ones. A failed send (of either kind) either sent nothing and
  // left the connection up, or ended the connection (disconnected()).
  // Descriptors, on a Unix socket, go with the message's first byte.
  llvm::Error sendWithPayload(PayloadOpcode OpC, uint64_t SeqNo, llvm::ArrayRef<char> Plan,
                              llvm::ArrayRef<PayloadPart> Parts,
                              llvm::ArrayRef<int> Descriptors = {});

  // The descriptors that came with the message being handled, now the
  // caller's (AcceptDescriptors); for a payload handler, in finish().
  std::vector<int> takeDescriptors() { return Stream.takeDescriptors(); }
  // Most descriptors one message may bring; more fail the connection.
  static constexpr size_t MaxDescriptors = ByteStream::MaxDescriptors;

  // Closes the connection from this end, for Why (closeReason()), a failure
  // of kind Kind (endKind()): whatever waits on it fails.
  void closeWith(llvm::StringRef Why, FailureKind Kind);

  // Sends a heartbeat frame (see HeartbeatOpcode), between messages.
  llvm::Error sendHeartbeat();

  // Takes B for the session, once: from now on this end also reads the
  // peer's SharedLaunch and SharedResult messages there, and posts its own
  // there (plan alone, when it fits) once PeerReads, or once the peer posted
  // one. Any thread, before or after start().
  llvm::Error attachMailbox(std::unique_ptr<Mailbox> B, bool PeerReads);
  bool hasMailbox() const { return Mail.load() != nullptr; }

  // From now on, a read that waits longer than Timeout for the peer's next
  // byte (zero: forever) ends the connection with an error saying that the
  // peer stopped answering. Reads happen only while a reply is due, so an
  // idle session is never ended by it. So does a send that could hand the
  // peer no byte for Timeout. Either only while the other direction moved
  // nothing either: a peer that takes a long request in, or that sends
  // heartbeats while it is too busy to read, is alive.
  void setReplyTimeout(std::chrono::milliseconds Timeout);
  // Reads wait for ever again (as before any timeout was set).
  void clearReadTimeout() { Stream.clearReadTimeout(); }

  // "plain", or the TLS version and cipher suite (TlsStream.h).
  std::string protection() const { return Stream.protection(); }
  bool overTls() const { return Stream.tls() != nullptr; }

  int fd() const { return Stream.fd(); }
  bool disconnected() const { return Disconnected.load(); }
  // Waits, up to Limit, until no message is being written. Code that may end
  // the process (a kernel) waits first: another thread's send that has just
  // gone out may not be counted yet, and a death then looks to whoever reads
  // the mark (SendMark.h) like one in the middle of a message.
  void waitUntilQuiet(std::chrono::milliseconds Limit) const;
  // For a crash handler: takes the stream for good, unless a message is
  // partly written (then false: a frame injected now would land in its
  // middle). Lock-free, so async-signal-safe; every send after it fails.
  bool claimStream();
  // Once claimStream() succeeded, sends Frame (a whole message) through
  // the TLS stream, from a thread that may block: a crash handler cannot
  // call into OpenSSL itself (CrashReporter hands this to a standby
  // thread). True when it all went.
  bool sendClaimed(llvm::StringRef Frame);

  // Calls this end started: each is one round trip.
  uint64_t requestsSent() const { return Requests.load(std::memory_order_relaxed); }
  // Calls sent whose replies have not been handled yet (ReadOnDemand only).
  uint64_t repliesDue() const { return RepliesDue.load(); }
  uint64_t messagesSent() const { return Sent.load(std::memory_order_relaxed); }
  uint64_t messagesReceived() const { return Received.load(std::memory_order_relaxed); }
  uint64_t bytesSent() const { return BytesOut.load(std::memory_order_relaxed); }
  uint64_t bytesReceived() const { return BytesIn.load(std::memory_order_relaxed); }
  // Heartbeats sent or received, kept out of the message counts.
  uint64_t heartbeats() const { return Heartbeats.load(std::memory_order_relaxed); }
  // Bytes written to and read from the socket so far, counted as each system
  // call returns rather than per whole message: what a progress display
  // reads, from any thread, while one large message is on its way.
  uint64_t bytesWritten() const { return MovedOut.load(std::memory_order_relaxed); }
  uint64_t bytesRead() const { return MovedIn.load(std::memory_order_relaxed); }

  // Why the peer hung up, when it said so (its Hangup message carried an
  // error), quoted and cleaned (PeerText.h); empty otherwise.
  std::string hangupReason() const;
  // Why this end closed the connection, when a send failed after part of a
  // message went out (or found the peer gone); empty otherwise.
  std::string closeReason() const;
  // What kind of failure the connection's end is, for calls that find it
  // ended: the kind the peer's hangup reason names (HangupKind.h), else
  // that of this end's reason to close, else ExecutorLost (the peer went
  // without a word). The reasons take precedence in that order, as the
  // session's message gives them.
  FailureKind endKind() const;
  uint64_t maxMessageSize() const { return Opts.MaxMessageSize; }

private:
  SocketTransport(llvm::orc::SimpleRemoteEPCTransportClient &Client, int Fd, TransportOptions Opts,
                  std::unique_ptr<TlsStream> Tls)
      : Client(Client), Opts(Opts), Stream(Fd, std::move(Tls), Opts.AcceptDescriptors),
        Mark(Opts.Mark ? *Opts.Mark : OwnMark),
        StreamBase(Opts.Mark && !Stream.tls() ? startCounting(Fd, *Opts.Mark) : SendMark::Never) {
    if (Stream.tls())
      Mark.Sealed.store(true, std::memory_order_release);
  }

  // A send moving nothing is checked on every Timeout / SendSlices.
  static constexpr unsigned SendSlices = 4;

  void startReader();
  llvm::Error sendFrame(iovec *Iov, int Count, uint64_t MsgSize, bool Call) EXCLUDES(SendMutex);
  void readLoop() EXCLUDES(ReadMutex, StateMutex);
  int sendAll(iovec *Iov, int Count, uint64_t &Written, llvm::ArrayRef<int> Descriptors = {})
      REQUIRES(SendMutex);
  llvm::Error refuse(llvm::Error Why) EXCLUDES(SendMutex);
  void discardFor(uint64_t Bytes, std::chrono::milliseconds Limit);
  llvm::Error lostWhileSending(const char *What, int Errno, uint64_t Written, uint64_t MsgSize);
  bool beginSend(uint64_t MsgSize) REQUIRES(SendMutex);
  void endSend(uint64_t Written) REQUIRES(SendMutex);
  static llvm::Error goingDown();
  llvm::Error readOnDemand(bool &Eof) EXCLUDES(ReadMutex, StateMutex);
  void endReading(llvm::Error Err) EXCLUDES(StateMutex);
  llvm::Error readMessage(bool &Eof) REQUIRES(ReadMutex);
  llvm::Error readExact(char *Dst, size_t Size, bool *CleanEof);
  static llvm::Error tooManyDescriptors();
  static bool timedOut(int Errno);
  bool peerTookBytes(uint64_t &Seen) const;
  llvm::Error readFailed(const char *What, int Errno);
  llvm::Error tlsFailed(const char *What);
  bool tlsFailedHere() const { return Stream.tls() && Stream.tls()->failure() != TlsFailure::None; }
  void noteClosed(llvm::StringRef Why, FailureKind Kind) EXCLUDES(HangupMutex);
  llvm::Error waitForFirstMessage(bool &Spoke);
  struct Head {
    char Bytes[PeekSize];
    size_t Visible = 0;    // bytes of the message seen but not consumed
    bool Consumed = false; // the header was read, not peeked
  };
  llvm::Error readHead(Head &H, bool &Eof);
  llvm::Error completeHead(Head &H);
  void spinForMessage();
  llvm::Expected<bool> awaitMail(Mailbox &B) REQUIRES(ReadMutex);
  void wake(Mailbox &B) REQUIRES(ReadMutex);
  // Asks the kernel only (FIONREAD); called from the mailbox's look, in a
  // lambda the analysis cannot see into, on the thread holding ReadMutex.
  uint64_t bytesWaiting() const;
  llvm::Error readMail(Mailbox &B) REQUIRES(ReadMutex);
  llvm::Error sendBareFrame(uint64_t OpC, const char *What) REQUIRES(SendMutex);
  llvm::Error ringDoorbell() REQUIRES(SendMutex);
  llvm::Error readDoorbell(Head &H, uint64_t MsgSize) REQUIRES(ReadMutex);
  llvm::Error readHeartbeat(Head &H, uint64_t MsgSize) REQUIRES(ReadMutex);
  llvm::Expected<size_t> readPlan(Head &H, uint64_t PlanSize,
                                  llvm::orc::shared::WrapperFunctionBuffer &Plan)
      REQUIRES(ReadMutex);
  llvm::Error readPayloadMessage(Head &H, uint64_t MsgSize) REQUIRES(ReadMutex);
  llvm::Error readBody(Head &H, uint64_t Bytes, llvm::orc::shared::WrapperFunctionBuffer &Out)
      REQUIRES(ReadMutex);
  llvm::Error protocolError(const llvm::Twine &Why);
  llvm::Error readInto(llvm::MutableArrayRef<iovec> Dst);
  llvm::Error readPlaced(llvm::SmallVectorImpl<iovec> &Iov, llvm::ArrayRef<iovec> Dst,
                         PayloadHandler &Handler, llvm::Error &Refused);
  llvm::Error readThrough(PayloadSink *Sink, uint64_t Bytes, llvm::Error &Refused);
  llvm::Error drain(uint64_t Bytes);
  int sendParts(llvm::SmallVectorImpl<iovec> &Iov, llvm::ArrayRef<PayloadPart> Parts,
                uint64_t &Written) REQUIRES(SendMutex);
  void peekHangup();
  void noteHangup(llvm::orc::SimpleRemoteEPCOpcode OpC,
                  const llvm::orc::shared::WrapperFunctionBuffer &Args) EXCLUDES(HangupMutex);

  // Members, and who may touch them: a lock's name in GUARDED_BY (checked
  // by Clang, tools/thread-safety-check), else the comment says.
  llvm::orc::SimpleRemoteEPCTransportClient &Client; // its callbacks run on the reader
  const TransportOptions Opts;                       // set at creation, then only read
  // The socket, and the TLS records on it when the bytes travel in them:
  // readers under ReadMutex, senders under SendMutex (ByteStream.h); its
  // own locks keep the rest apart.
  ByteStream Stream;
  // Started once, by start() or by the first send (whichever
  // ReaderDeferred.exchange() lets through); joined by the destructor.
  std::thread Reader;
  std::atomic<bool> ReaderDeferred{false};
  sync::Mutex SendMutex;
  std::atomic<bool> Disconnected{false}; // any thread; set once, by disconnect()
  SendMark OwnMark;                      // its fields are atomics (SendMark.h)
  SendMark &Mark;                        // OwnMark or Opts.Mark; set at creation
  // Where the stream's count of bytes written stood when this transport
  // took it (startCounting(), at creation), and what it wrote since: where
  // each message ends.
  const uint64_t StreamBase;
  uint64_t Streamed GUARDED_BY(SendMutex) = 0;
  // The size of a message refused as too large: written by whoever reads
  // (under ReadMutex, in readMessage()), read by the reader thread once
  // reading has ended. A caller in readUntil() that wrote it ends reading
  // under StateMutex before the reader thread, woken under StateMutex,
  // reads it: written before it is read, never at once.
  uint64_t Refused = 0;
  std::atomic<PayloadHandler *> Payloads{nullptr}; // any thread; called on the reader
  // The shared mailbox, once attached (set once under SendMutex, then read
  // by reader and senders alike through Mail), and whether to post to it.
  std::unique_ptr<Mailbox> OwnedMail GUARDED_BY(SendMutex);
  std::atomic<Mailbox *> Mail{nullptr};
  std::atomic<bool> PostToPeer{false};
  // Frames sent on the socket and read from it, doorbells aside: how a
  // mailbox message keeps its place.
  uint64_t FramesOut GUARDED_BY(SendMutex) = 0;
  uint64_t FramesIn GUARDED_BY(ReadMutex) = 0;
  bool Asleep GUARDED_BY(ReadMutex) = false; // this end said so in the mailbox
  // Whoever reads a message holds ReadMutex: the reader thread, or a caller
  // in readUntil. The rest says when the reader thread should read: EPC
  // replies due, callers reading their own, and whether reading has ended,
  // and why, for the reader thread, which alone ends the session.
  sync::Mutex ReadMutex;
  sync::Mutex StateMutex;
  sync::CondVar StateChanged; // with StateMutex: RepliesDue, Claims or Ended changed
  // Changed by senders under StateMutex (so that the reader's wait cannot
  // miss it), read by anyone without it.
  std::atomic<uint64_t> RepliesDue{0};
  // Callers in readUntil(): changed by them without a lock (the last one
  // out takes StateMutex to wake the reader), read in the reader's wait.
  std::atomic<unsigned> Claims{0};
  bool Ended GUARDED_BY(StateMutex) = false;
  std::string EndError GUARDED_BY(StateMutex);
  struct MiFree {
    void operator()(char *P) const;
  };
  std::unique_ptr<char, MiFree> Chunk GUARDED_BY(SendMutex); // packing scratch, made on first use
  size_t ChunkBytes GUARDED_BY(SendMutex) = 0;               // Chunk's size
  // Any thread (relaxed counters).
  std::atomic<uint64_t> Requests{0}, Sent{0}, Received{0}, BytesOut{0}, BytesIn{0}, Heartbeats{0};
  // For the error text and the senders; SO_RCVTIMEO and SO_SNDTIMEO do the
  // timing.
  std::atomic<int64_t> ReplyTimeoutMs{0};
  // Bytes moved each way, grown by whoever is writing or reading the socket
  // (bytesWritten, bytesRead); and reads or peeks that saw bytes. A sender
  // that cannot move a byte, or a reader that waits for one, tells a peer
  // that is alive (busy, or taking a long request in) from one that is gone
  // by what the other direction did meanwhile.
  std::atomic<uint64_t> MovedOut{0}, MovedIn{0}, Heard{0};
  // Whether a whole message has been read (set once).
  bool ReadOne GUARDED_BY(ReadMutex) = false;
  // Why the connection ended, each reason with its kind: the peer's
  // (Hangup) and this end's (Closed).
  mutable sync::Mutex HangupMutex;
  std::string Hangup GUARDED_BY(HangupMutex);
  std::string Closed GUARDED_BY(HangupMutex);
  FailureKind HangupKind GUARDED_BY(HangupMutex) = FailureKind::ExecutorLost;
  FailureKind ClosedKind GUARDED_BY(HangupMutex) = FailureKind::ExecutorLost;
};

} // namespace catalyst::remote::wire

#endif
