//===- TlsStream.h - TLS 1.3 records beneath the framing --------*- C++ -*-===//
//
// A session over a network carries its bytes in TLS 1.3 records (OpenSSL),
// keyed by an external pre-shared key (RFC 8446, section 4.2.11) that both
// ends derive from the token and the nonces of the handshake that just
// proved it (Handshake.h): no certificates, and a relay that forwarded the
// handshake holds nothing that decrypts or forges a record. The key
// exchange still runs ECDHE (psk_dhe_ke), so a token that leaks later does
// not open sessions recorded earlier.
//
//   auto Psk = derivePsk(Secret, ExecutorNonce, HostNonce);
//   auto S = TlsStream::handshake(Fd, TlsRole::Client, *Psk, Deadline);
//   S->write(Iov, Count); S->read(Iov, Count); S->peek(Buf, Size, Wait);
//
// The stream is a byte stream like the socket beneath it, with the
// socket's semantics where the transport relies on them: a read returns
// what has arrived (at least a byte); a write moves at least a byte;
// either gives up with EAGAIN after the timeout set for it (as SO_RCVTIMEO
// and SO_SNDTIMEO would); peek() shows what is coming without consuming it.
// It asks OpenSSL for kernel TLS (SSL_OP_ENABLE_KTLS): where the kernel
// takes the records, sends and receives skip OpenSSL's record layer.
// Elsewhere a write seals up to 256 KiB into records in memory and hands
// them to the socket in one system call (a call per record costs more than
// sealing it; a message's first batch is a record, and batches double as
// it goes on), and counts them written once the socket took them all;
// OpenSSL reads ahead two records at a time, and a read waits for the
// socket before asking OpenSSL when OpenSSL holds nothing.
//
// Thread safety: one reader and any number of writers (serialized by the
// caller, as the transport's SendMutex does) may use it at once. OpenSSL's
// objects are not thread-safe, so every call into them holds Lock; the
// socket is non-blocking and a thread waits for it (poll) without Lock.
// Sealed records leave under Lock too, from the writer or, for what a read
// makes OpenSSL say (an alert), from the reader, in the order sealed.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_TLSSTREAM_H
#define CATALYST_REMOTE_WIRE_TLSSTREAM_H

#include "Secret.h"
#include "sync/Mutex.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

struct iovec;
typedef struct ssl_st SSL;

namespace catalyst::remote::wire {

inline constexpr size_t PskSize = 32;
using Psk = std::array<uint8_t, PskSize>;

// HKDF-SHA-256 of Secret, salted with both nonces of the handshake, for
// this session alone. The caller wipes it once the TLS handshake is done.
llvm::Expected<Psk> derivePsk(llvm::StringRef Secret, const Nonce &FromExecutor,
                              const Nonce &FromHost);

// Loads OpenSSL's TLS now: processes forked afterwards (an executor's
// connections) then do not each pay for it during their handshake.
llvm::Error prepareTls();

// The host connects (client); the executor accepts (server).
enum class TlsRole { Client, Server };

// Why a TLS stream failed, for the transport's messages.
enum class TlsFailure {
  None,
  Tampered,      // what arrived after the handshake was not the peer's records
  TamperedThere, // the peer's alert says so of what reached it
  PeerAlert,     // the peer ended the session with another alert
  Protocol,      // anything else OpenSSL refused (in the handshake, say)
};

class TlsStream {
public:
  // Runs the TLS 1.3 handshake on the connected socket Fd (which stays the
  // caller's, and is made non-blocking) by the deadline. Fails with what
  // went wrong: a peer that derived another key (it does not know the
  // token) cannot complete it.
  static llvm::Expected<std::unique_ptr<TlsStream>>
  handshake(int Fd, TlsRole Role, const Psk &Key, std::chrono::steady_clock::time_point By);

  ~TlsStream();
  TlsStream(const TlsStream &) = delete;
  TlsStream &operator=(const TlsStream &) = delete;

  // Encrypts and sends from the first of Count pieces: at least a byte, at
  // most 256 KiB (with kernel TLS, a record). Returns the bytes taken, or
  // -1 with errno (EAGAIN once the send timeout passed without progress;
  // EPIPE, ECONNRESET; EBADMSG or EPROTO for a TLS failure, which failure()
  // names). After EAGAIN, call again with the same bytes.
  ssize_t write(const iovec *Iov, int Count);
  // Fills Count pieces with what has arrived, waiting (up to the read
  // timeout) for at least a byte. Returns the bytes read, 0 at the end of
  // the stream, or -1 with errno as write() does.
  ssize_t read(const iovec *Iov, int Count);
  // Copies up to Size bytes of what comes next into Dst without consuming
  // them; with Wait, waits (as read() does) until at least one has come.
  // Never shows more than LookaheadSize.
  ssize_t peek(char *Dst, size_t Size, bool Wait);
  static constexpr size_t LookaheadSize = 64 << 10;
  // Whether a read would find bytes without waiting on the socket, or the
  // socket is readable (then a record may still be partial).
  bool readable();
  // Waits up to Ms (negative: forever) for readable(); false on timeout.
  bool waitReadable(int Ms);

  // Timeouts as SO_RCVTIMEO and SO_SNDTIMEO would keep them (zero:
  // forever). Any thread.
  void setReadTimeout(std::chrono::microseconds T) { ReadTimeoutUs = T.count(); }
  void setSendTimeout(std::chrono::microseconds T) { SendTimeoutUs = T.count(); }

  // Ends the stream in both directions, waking a reader that waits.
  void shutdown();

  TlsFailure failure() const { return Failed.load(); }
  // OpenSSL's words for the failure, if any.
  std::string failureText() const;
  // "TLSv1.3 TLS_AES_128_GCM_SHA256", plus where the kernel does the work.
  std::string description() const;
  bool kernelSends() const { return KernelSend; }
  int fd() const { return Fd; }

private:
  TlsStream(int Fd, SSL *S) : Fd(Fd), Ssl(S) {}

  enum class Step { Done, WantRead, WantWrite, Closed, SysError, Failed };
  Step outcome(int Ret) REQUIRES(Lock);
  ssize_t fail(Step S);
  bool waitFor(short Events, int64_t TimeoutUs);
  ssize_t fillLookahead() REQUIRES(Lock);
  ssize_t readRecords(char *Dst, size_t Size) REQUIRES(Lock);
  bool waitFirst(bool Waited);
  bool sealIntoBuffer() REQUIRES(Lock);
  void gather(const iovec *Iov, int Count) REQUIRES(Lock);
  ssize_t writeEach(const iovec *Iov, int Count) EXCLUDES(Lock);
  ssize_t writeBatched(const iovec *Iov, int Count) EXCLUDES(Lock);
  size_t nextBatch(const iovec *Iov) REQUIRES(Lock);
  ssize_t sealBatch(const iovec *Iov, int Count) REQUIRES(Lock);
  Step sealWaited() REQUIRES(Lock);
  bool pushSealed() REQUIRES(Lock);

  const int Fd;
  SSL *const Ssl;
  // Set before the stream is shared.
  bool Established = false; // the handshake is done
  bool KernelSend = false, KernelReceive = false;
  bool Batched = false;     // OpenSSL's records go to Sealed, not the socket
  mutable sync::Mutex Lock; // every call into Ssl; Failure, and the members below
  std::unique_ptr<char[]> Ahead GUARDED_BY(Lock); // peeked bytes not yet read, made on first peek
  size_t AheadStart GUARDED_BY(Lock) = 0;
  size_t AheadEnd GUARDED_BY(Lock) = 0;
  // Small pieces gathered into one record. With kernel TLS, a record
  // OpenSSL began to send but the socket did not take yet: the next write()
  // must offer the same bytes again (under Lock).
  std::unique_ptr<char[]> Staging GUARDED_BY(Lock);
  size_t StagedBytes GUARDED_BY(Lock) = 0;
  // Batched: records sealed and not yet taken by the socket from
  // SealedSent on, and how many of the caller's bytes they carry (under
  // Lock; OpenSSL appends to Sealed during calls made under it).
  std::vector<char> Sealed GUARDED_BY(Lock);
  size_t SealedSent GUARDED_BY(Lock) = 0;
  size_t BatchTaken GUARDED_BY(Lock) = 0;
  // Where the caller's bytes last sealed ended, and how many that batch
  // could take: a write that goes on from there seals more (under Lock).
  const void *NextByte GUARDED_BY(Lock) = nullptr;
  size_t BatchLimit GUARDED_BY(Lock) = 0;
  std::string Failure GUARDED_BY(Lock);
  // The socket's error, when a call failed with one: set under Lock, read
  // by fail() after the call let Lock go (so atomic: the other direction's
  // call may set it meanwhile).
  std::atomic<int> LastErrno{0};
  std::atomic<TlsFailure> Failed{TlsFailure::None};
  std::atomic<int64_t> ReadTimeoutUs{0}, SendTimeoutUs{0};
};

} // namespace catalyst::remote::wire

#endif
