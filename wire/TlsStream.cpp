//===- TlsStream.cpp - TLS 1.3 records beneath the framing ----------------===//

#include "TlsStream.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <utility>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

constexpr char PskLabel[] = "catalyst-remote tls psk v1";
constexpr unsigned char PskIdentity[] = "catalyst-remote";
// TLS_AES_128_GCM_SHA256: AES-NI and carry-less multiply make it the
// cheapest AEAD on the machines this runs on.
constexpr char Suite[] = "TLS_AES_128_GCM_SHA256";
constexpr unsigned char SuiteId[] = {0x13, 0x01};
// What one record carries at most (RFC 8446, 5.1).
constexpr size_t RecordBytes = 16 << 10;
// OpenSSL reads ahead this much at a time: two records per system call.
// Not more: before each record it moves what it holds after it to the
// front of its buffer (to align the payload), so a 256 KiB buffer moved
// several times the bytes it read (7% more CPU for a stream of 16 MiB
// messages than this).
constexpr size_t ReadBuffer = 2 * (RecordBytes + 256);
// A write seals up to this much into records before handing them to the
// socket in one call: a system call per record costs more than sealing it.
constexpr size_t SealBatch = 256 << 10;
// Room for one batch of records, each with its header, content type and
// tag (22 bytes; 256 is OpenSSL's bound), and an alert or two besides.
constexpr size_t SealedReserve = SealBatch + (SealBatch / RecordBytes + 2) * 256 + (4 << 10);

// OpenSSL's queued errors as one line, clearing the queue.
std::string takeOpenSslErrors() {
  std::string Out;
  while (unsigned long E = ::ERR_get_error()) {
    char Buf[256];
    ::ERR_error_string_n(E, Buf, sizeof(Buf));
    if (!Out.empty())
      Out += "; ";
    Out += Buf;
  }
  return Out.empty() ? "no reason given" : Out;
}

Error tlsError(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), What + ": " + takeOpenSslErrors());
}

// The key of this session's PSK, for the callbacks below.
struct PskHolder {
  const Psk *Key;
};

int holderIndex() {
  static int Index = ::SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return Index;
}

SSL_SESSION *pskSession(SSL *S) {
  auto *H = static_cast<PskHolder *>(::SSL_get_ex_data(S, holderIndex()));
  const SSL_CIPHER *C = ::SSL_CIPHER_find(S, SuiteId);
  SSL_SESSION *Session = ::SSL_SESSION_new();
  if (!H || !C || !Session || !::SSL_SESSION_set1_master_key(Session, H->Key->data(), PskSize) ||
      !::SSL_SESSION_set_cipher(Session, C) ||
      !::SSL_SESSION_set_protocol_version(Session, TLS1_3_VERSION)) {
    ::SSL_SESSION_free(Session);
    return nullptr;
  }
  return Session;
}

int usePsk(SSL *S, const EVP_MD *, const unsigned char **Id, size_t *IdLen, SSL_SESSION **Out) {
  *Out = pskSession(S);
  *Id = PskIdentity;
  *IdLen = sizeof(PskIdentity) - 1;
  return *Out ? 1 : 0;
}

int findPsk(SSL *S, const unsigned char *Id, size_t IdLen, SSL_SESSION **Out) {
  *Out = nullptr; // an identity not ours: no PSK, and the handshake fails
  if (IdLen == sizeof(PskIdentity) - 1 && std::memcmp(Id, PskIdentity, IdLen) == 0)
    *Out = pskSession(S);
  return *Out ? 1 : 0;
}

SSL_CTX *makeContext(TlsRole Role) {
  SSL_CTX *Ctx =
      ::SSL_CTX_new(Role == TlsRole::Client ? ::TLS_client_method() : ::TLS_server_method());
  if (!Ctx)
    return nullptr;
  // No tickets (nothing resumes), kernel TLS where offered, and an end of
  // stream without close_notify read as an end: the framing above knows
  // whether a message was cut.
  ::SSL_CTX_set_options(Ctx, SSL_OP_NO_TICKET | SSL_OP_ENABLE_KTLS | SSL_OP_IGNORE_UNEXPECTED_EOF);
  ::SSL_CTX_set_num_tickets(Ctx, 0);
  ::SSL_CTX_set_mode(Ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  ::SSL_CTX_set_read_ahead(Ctx, 1);
  ::SSL_CTX_set_default_read_buffer_len(Ctx, ReadBuffer);
  if (!::SSL_CTX_set_min_proto_version(Ctx, TLS1_3_VERSION) ||
      !::SSL_CTX_set_ciphersuites(Ctx, Suite)) {
    ::SSL_CTX_free(Ctx);
    return nullptr;
  }
  if (Role == TlsRole::Client)
    ::SSL_CTX_set_psk_use_session_callback(Ctx, usePsk);
  else
    ::SSL_CTX_set_psk_find_session_callback(Ctx, findPsk);
  return Ctx;
}

// Records OpenSSL seals go to the stream's Sealed buffer (see
// TlsStream::sealIntoBuffer), not to the socket, so that a batch of them
// leaves in one system call. Writes always succeed: the buffer grows if
// it must.
int sinkWrite(BIO *B, const char *Data, size_t Len, size_t *Written) {
  auto *Out = static_cast<std::vector<char> *>(::BIO_get_data(B));
  Out->insert(Out->end(), Data, Data + Len);
  *Written = Len;
  return 1;
}

long sinkControl(BIO *, int Cmd, long, void *) {
  return Cmd == BIO_CTRL_FLUSH ? 1 : 0; // flushed by the stream, not here
}

int sinkCreate(BIO *B) {
  ::BIO_set_init(B, 1);
  return 1;
}

// Made once, kept for the process (BIOs of any stream may use it).
const BIO_METHOD *sinkMethod() {
  static BIO_METHOD *M = [] {
    int Index = ::BIO_get_new_index();
    BIO_METHOD *New =
        Index < 0 ? nullptr
                  : ::BIO_meth_new(Index | BIO_TYPE_SOURCE_SINK, "catalyst-remote sealed records");
    if (New &&
        (!::BIO_meth_set_write_ex(New, sinkWrite) || !::BIO_meth_set_ctrl(New, sinkControl) ||
         !::BIO_meth_set_create(New, sinkCreate))) {
      ::BIO_meth_free(New);
      New = nullptr;
    }
    return New;
  }();
  return M;
}

// Alerts a peer sends when what reached it was not this end's records.
bool alertMeansTampering(int Alert) {
  switch (Alert) {
  case SSL_AD_BAD_RECORD_MAC:
  case SSL_AD_DECRYPT_ERROR:
  case SSL_AD_DECODE_ERROR:
  case SSL_AD_UNEXPECTED_MESSAGE:
  case SSL_AD_RECORD_OVERFLOW:
  case SSL_AD_PROTOCOL_VERSION:
    return true;
  default:
    return false;
  }
}

int msUntil(std::chrono::steady_clock::time_point By) {
  auto Left = std::chrono::ceil<std::chrono::milliseconds>(By - std::chrono::steady_clock::now());
  return int(std::clamp<int64_t>(Left.count(), 0, INT32_MAX));
}

} // namespace

Error prepareTls() {
  SSL_CTX *Ctx = makeContext(TlsRole::Server);
  if (!Ctx)
    return tlsError("cannot set up OpenSSL's TLS");
  ::SSL_CTX_free(Ctx);
  return Error::success();
}

Expected<Psk> derivePsk(StringRef Secret, const Nonce &FromExecutor, const Nonce &FromHost) {
  uint8_t Salt[2 * NonceSize];
  std::memcpy(Salt, FromExecutor.data(), NonceSize);
  std::memcpy(Salt + NonceSize, FromHost.data(), NonceSize);
  EVP_PKEY_CTX *Ctx = ::EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  scope_exit Free([&] { ::EVP_PKEY_CTX_free(Ctx); });
  Psk Out;
  size_t Len = Out.size();
  if (!Ctx || ::EVP_PKEY_derive_init(Ctx) <= 0 ||
      ::EVP_PKEY_CTX_set_hkdf_md(Ctx, ::EVP_sha256()) <= 0 ||
      ::EVP_PKEY_CTX_set1_hkdf_salt(Ctx, Salt, int(sizeof(Salt))) <= 0 ||
      ::EVP_PKEY_CTX_set1_hkdf_key(Ctx, reinterpret_cast<const unsigned char *>(Secret.data()),
                                   int(Secret.size())) <= 0 ||
      ::EVP_PKEY_CTX_add1_hkdf_info(Ctx, reinterpret_cast<const unsigned char *>(PskLabel),
                                    int(sizeof(PskLabel) - 1)) <= 0 ||
      ::EVP_PKEY_derive(Ctx, Out.data(), &Len) <= 0 || Len != Out.size())
    return tlsError("OpenSSL could not derive the session's TLS key");
  return Out;
}

Expected<std::unique_ptr<TlsStream>>
TlsStream::handshake(int Fd, TlsRole Role, const Psk &Key,
                     std::chrono::steady_clock::time_point By) {
  const char *Side =
      Role == TlsRole::Client ? "TLS handshake with the executor" : "TLS handshake with the host";
  int Flags = ::fcntl(Fd, F_GETFL);
  if (Flags < 0 || ::fcntl(Fd, F_SETFL, Flags | O_NONBLOCK) < 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "%s: cannot make the socket non-blocking: %s", Side,
                             std::strerror(errno));
  ::ERR_clear_error();
  SSL_CTX *Ctx = makeContext(Role);
  if (!Ctx)
    return tlsError(formatv("{0}: cannot set up OpenSSL", Side));
  SSL *S = ::SSL_new(Ctx);
  ::SSL_CTX_free(Ctx); // the SSL holds its own reference
  if (!S || !::SSL_set_fd(S, Fd)) {
    ::SSL_free(S);
    return tlsError(formatv("{0}: cannot set up OpenSSL", Side));
  }
  std::unique_ptr<TlsStream> T(new TlsStream(Fd, S));
  // No other thread has T yet: held, uncontended, so that it is called
  // into as everywhere else.
  sync::MutexLock Alone(T->Lock);
  PskHolder Holder{&Key};
  ::SSL_set_ex_data(S, holderIndex(), &Holder);
  scope_exit Forget([&] { ::SSL_set_ex_data(S, holderIndex(), nullptr); });
  for (;;) {
    int R = Role == TlsRole::Client ? ::SSL_connect(S) : ::SSL_accept(S);
    Step Next = T->outcome(R);
    if (Next == Step::Done)
      break;
    if (Next == Step::Closed || Next == Step::SysError)
      return createStringError(inconvertibleErrorCode(), "%s: the peer closed the connection",
                               Side);
    if (Next == Step::Failed)
      return createStringError(inconvertibleErrorCode(),
                               "%s failed: the two ends' keys differ (does the peer know the "
                               "token?) or the handshake was altered on the way (OpenSSL: %s)",
                               Side, T->Failure.c_str());
    pollfd P{Fd, short(Next == Step::WantRead ? POLLIN : POLLOUT), 0};
    int Ms = msUntil(By);
    if (Ms == 0 || (::poll(&P, 1, Ms) == 0 && msUntil(By) == 0))
      return createStringError(std::error_code(ETIMEDOUT, std::generic_category()),
                               "%s: the peer did not complete it in time", Side);
  }
  T->Established = true;
  T->KernelSend = BIO_get_ktls_send(::SSL_get_wbio(S));
  T->KernelReceive = BIO_get_ktls_recv(::SSL_get_rbio(S));
  if (!T->KernelSend && !T->sealIntoBuffer())
    return tlsError(formatv("{0}: cannot set up OpenSSL's output", Side));
  return T;
}

// Once the handshake is done: OpenSSL's records go to Sealed (kernel TLS
// needs the socket itself, and makes records its own way).
bool TlsStream::sealIntoBuffer() {
  const BIO_METHOD *M = sinkMethod();
  BIO *Sink = M ? ::BIO_new(M) : nullptr;
  if (!Sink)
    return false;
  Sealed.reserve(SealedReserve);
  ::BIO_set_data(Sink, &Sealed);
  ::SSL_set0_wbio(Ssl, Sink);
  Batched = true;
  return true;
}

TlsStream::~TlsStream() {
  ::SSL_free(Ssl);
}

// What the last call into OpenSSL (under Lock) asks for next; a failure
// is kept, with OpenSSL's words, for failure() and failureText().
TlsStream::Step TlsStream::outcome(int Ret) {
  switch (::SSL_get_error(Ssl, Ret)) {
  case SSL_ERROR_NONE:
    return Step::Done;
  case SSL_ERROR_WANT_READ:
    return Step::WantRead;
  case SSL_ERROR_WANT_WRITE:
    return Step::WantWrite;
  case SSL_ERROR_ZERO_RETURN:
    return Step::Closed;
  case SSL_ERROR_SYSCALL:
    // The socket failed (a reset, say): errno says how, unless it ended.
    LastErrno = errno;
    ::ERR_clear_error();
    return LastErrno == 0 ? Step::Closed : Step::SysError;
  default:
    break;
  }
  unsigned long E = ::ERR_peek_error();
  int Reason = ERR_GET_REASON(E);
  // Once the handshake is done, the peer sends nothing but well-formed
  // records: anything else (a record that fails authentication, or one
  // that is not a record at all) was altered or added on the way.
  TlsFailure Kind = Established ? TlsFailure::Tampered : TlsFailure::Protocol;
  if (Reason >= SSL_AD_REASON_OFFSET && Reason < SSL_AD_REASON_OFFSET + 256)
    Kind = alertMeansTampering(Reason - SSL_AD_REASON_OFFSET) ? TlsFailure::TamperedThere
                                                              : TlsFailure::PeerAlert;
  else if (Reason == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC)
    Kind = TlsFailure::Tampered;
  if (Failed == TlsFailure::None) {
    Failure = takeOpenSslErrors();
    Failed = Kind;
  }
  ::ERR_clear_error();
  return Step::Failed;
}

// -1 with errno for a step that ends the call without bytes.
ssize_t TlsStream::fail(Step S) {
  if (S == Step::Failed)
    errno =
        Failed == TlsFailure::Tampered || Failed == TlsFailure::TamperedThere ? EBADMSG : EPROTO;
  else if (S == Step::SysError)
    errno = LastErrno;
  else if (S == Step::Closed)
    errno = EPIPE;
  else
    errno = EAGAIN;
  return -1;
}

// Waits for the socket; false once TimeoutUs (zero: forever) passed.
bool TlsStream::waitFor(short Events, int64_t TimeoutUs) {
  int Ms = TimeoutUs > 0 ? int(std::max<int64_t>(1, (TimeoutUs + 999) / 1000)) : -1;
  pollfd P{Fd, Events, 0};
  for (;;) {
    int R = ::poll(&P, 1, Ms);
    if (R >= 0 || errno != EINTR)
      return R != 0;
  }
}

std::string TlsStream::failureText() const {
  sync::MutexLock G(Lock);
  return Failure;
}

std::string TlsStream::description() const {
  sync::MutexLock G(Lock);
  std::string D = std::string(::SSL_get_version(Ssl)) + " " +
                  ::SSL_CIPHER_get_name(::SSL_get_current_cipher(Ssl));
  if (KernelSend || KernelReceive)
    D += KernelSend && KernelReceive
             ? " (kernel TLS)"
             : (KernelSend ? " (kernel TLS sends)" : " (kernel TLS receives)");
  return D;
}

ssize_t TlsStream::write(const iovec *Iov, int Count) {
  if (Count <= 0)
    return 0;
  return Batched ? writeBatched(Iov, Count) : writeEach(Iov, Count);
}

// Gathers small pieces (a header, then its arguments) from the first of
// Iov into Staging, up to a record (under Lock).
void TlsStream::gather(const iovec *Iov, int Count) {
  if (!Staging)
    Staging.reset(new char[RecordBytes]);
  for (int I = 0; I < Count && StagedBytes < RecordBytes; ++I) {
    size_t N = std::min(Iov[I].iov_len, RecordBytes - StagedBytes);
    std::memcpy(Staging.get() + StagedBytes, Iov[I].iov_base, N);
    StagedBytes += N;
  }
}

// With kernel TLS: a record per call, straight to the socket.
ssize_t TlsStream::writeEach(const iovec *Iov, int Count) {
  for (;;) {
    Step S;
    size_t Done = 0;
    {
      sync::MutexLock G(Lock);
      if (Failed != TlsFailure::None)
        return fail(Step::Failed);
      // Small pieces go out as one record, gathered; a large one is
      // encrypted from where it is.
      const char *Src = static_cast<const char *>(Iov[0].iov_base);
      size_t Len = Iov[0].iov_len;
      if (StagedBytes == 0 && Len < RecordBytes && Count > 1)
        gather(Iov, Count);
      if (StagedBytes) {
        Src = Staging.get();
        Len = StagedBytes;
      }
      int R = ::SSL_write_ex(Ssl, Src, std::min(Len, size_t(INT_MAX)), &Done) ? 1 : 0;
      S = outcome(R);
      if (S == Step::Done)
        StagedBytes = 0;
    }
    if (S == Step::Done)
      return ssize_t(Done);
    if (S != Step::WantRead && S != Step::WantWrite)
      return fail(S);
    if (!waitFor(S == Step::WantRead ? POLLIN : POLLOUT, SendTimeoutUs.load()))
      return fail(Step::WantWrite);
  }
}

// How much the next batch seals (under Lock): a record when the caller
// starts on other bytes (a new message), so that its first bytes leave
// after one record is sealed rather than a whole batch; twice the last
// batch, up to SealBatch, while it goes on with the bytes right after
// those it gave last.
size_t TlsStream::nextBatch(const iovec *Iov) {
  BatchLimit = Iov[0].iov_base == NextByte ? std::min(2 * BatchLimit, SealBatch) : RecordBytes;
  return BatchLimit;
}

// Seals up to nextBatch() of the caller's bytes into Sealed (under Lock,
// with Sealed empty): small pieces gathered into one record, large ones
// sealed from where they are. Returns the bytes taken, or -1 with errno.
ssize_t TlsStream::sealBatch(const iovec *Iov, int Count) {
  size_t Limit = nextBatch(Iov), Taken = 0;
  int I = 0;
  size_t Off = 0;
  while (I < Count && Taken < Limit) {
    if (Off == Iov[I].iov_len) {
      ++I;
      Off = 0;
      continue;
    }
    const char *Src = static_cast<const char *>(Iov[I].iov_base) + Off;
    size_t Len = std::min(Iov[I].iov_len - Off, Limit - Taken);
    if (Len < RecordBytes && I + 1 < Count) {
      iovec First{const_cast<char *>(Src), Len};
      gather(&First, 1);
      gather(Iov + I + 1, Count - I - 1);
      Src = Staging.get();
      Len = std::min(StagedBytes, Limit - Taken);
      StagedBytes = 0;
    }
    for (size_t Done = 0, At = 0; At < Len; At += Done)
      if (Step S = outcome(::SSL_write_ex(Ssl, Src + At, Len - At, &Done) ? 1 : 0); S != Step::Done)
        return fail(S == Step::WantRead || S == Step::WantWrite ? sealWaited() : S);
    Taken += Len;
    // Step past what was sealed.
    for (size_t Left = Len; Left > 0 && I < Count;) {
      size_t Step = std::min(Left, Iov[I].iov_len - Off);
      Left -= Step;
      Off += Step;
      NextByte = static_cast<const char *>(Iov[I].iov_base) + Off;
      if (Off == Iov[I].iov_len) {
        ++I;
        Off = 0;
      }
    }
  }
  return ssize_t(Taken);
}

// Sealing into memory never waits; OpenSSL asking to is a failure (under
// Lock).
TlsStream::Step TlsStream::sealWaited() {
  if (Failed == TlsFailure::None) {
    Failure = "OpenSSL asked to wait while sealing records into memory";
    Failed = TlsFailure::Protocol;
  }
  return Step::Failed;
}

// Hands Sealed to the socket as far as it takes it without waiting (under
// Lock). False when the socket failed (LastErrno says how).
bool TlsStream::pushSealed() {
  while (SealedSent < Sealed.size()) {
    ssize_t N = ::send(Fd, Sealed.data() + SealedSent, Sealed.size() - SealedSent,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return true;
    if (N < 0) {
      LastErrno = errno;
      return false;
    }
    SealedSent += size_t(N);
  }
  Sealed.clear();
  SealedSent = 0;
  return true;
}

// Seals a batch, then waits (without Lock) until the socket has taken all
// of it: only then are its bytes counted as written. A batch the send
// timeout cut short is finished, not sealed again, by the next call, which
// the caller makes with the same bytes (as OpenSSL would require).
ssize_t TlsStream::writeBatched(const iovec *Iov, int Count) {
  for (;;) {
    {
      sync::MutexLock G(Lock);
      if (Failed != TlsFailure::None)
        return fail(Step::Failed);
      if (!pushSealed())
        return fail(Step::SysError);
      if (Sealed.empty() && BatchTaken > 0)
        return ssize_t(std::exchange(BatchTaken, 0));
      if (Sealed.empty()) {
        ssize_t N = sealBatch(Iov, Count);
        if (N <= 0)
          return N;
        BatchTaken = size_t(N);
        continue;
      }
    }
    if (!waitFor(POLLOUT, SendTimeoutUs.load()))
      return fail(Step::WantWrite);
  }
}

// Decrypts what OpenSSL can without waiting into Dst (under Lock): the
// bytes, 0 at the end of the stream, or -1 (errno EAGAIN: wait for the
// socket; else a failure).
ssize_t TlsStream::readRecords(char *Dst, size_t Size) {
  size_t Got = 0;
  while (Got < Size) {
    size_t N = 0;
    int R = ::SSL_read_ex(Ssl, Dst + Got, Size - Got, &N) ? 1 : 0;
    Step S = outcome(R);
    // What OpenSSL had to say back (an alert, say) leaves now.
    if (!Sealed.empty())
      pushSealed();
    if (S == Step::Done) {
      Got += N;
      // Nothing more read ahead: asking the socket again would most
      // likely find nothing, at the cost of a system call.
      if (!::SSL_has_pending(Ssl))
        break;
      continue;
    }
    if (Got > 0 && S != Step::Failed && S != Step::SysError)
      break;
    if (S == Step::Closed)
      return 0;
    return fail(S);
  }
  return ssize_t(Got);
}

// Whether to wait for the socket before asking OpenSSL (under Lock): when
// it holds nothing, a read most often finds nothing yet (a reply not yet
// sent), and a failed SSL_read costs more than the poll that avoids it.
bool TlsStream::waitFirst(bool Waited) {
  return !Waited && !::SSL_has_pending(Ssl);
}

ssize_t TlsStream::read(const iovec *Iov, int Count) {
  for (bool Waited = false;; Waited = true) {
    {
      sync::MutexLock G(Lock);
      size_t Got = 0;
      int I = 0;
      size_t Off = 0;
      // Peeked bytes first.
      while (AheadStart < AheadEnd && I < Count) {
        size_t N = std::min(AheadEnd - AheadStart, Iov[I].iov_len - Off);
        std::memcpy(static_cast<char *>(Iov[I].iov_base) + Off, Ahead.get() + AheadStart, N);
        AheadStart += N;
        Off += N;
        Got += N;
        if (Off == Iov[I].iov_len) {
          ++I;
          Off = 0;
        }
      }
      if (Got > 0)
        return ssize_t(Got);
      for (; I < Count && Iov[I].iov_len == 0; ++I)
        ;
      if (I == Count)
        return 0;
      if (!waitFirst(Waited)) {
        ssize_t N = readRecords(static_cast<char *>(Iov[I].iov_base), Iov[I].iov_len);
        if (N >= 0 || errno != EAGAIN)
          return N;
      }
    }
    if (!waitFor(POLLIN, ReadTimeoutUs.load()))
      return fail(Step::WantRead);
  }
}

// Moves what has arrived into the lookahead (under Lock): the bytes now
// visible there, or as readRecords() says when none are.
ssize_t TlsStream::fillLookahead() {
  if (!Ahead)
    Ahead.reset(new char[LookaheadSize]);
  if (AheadStart > 0) {
    std::memmove(Ahead.get(), Ahead.get() + AheadStart, AheadEnd - AheadStart);
    AheadEnd -= AheadStart;
    AheadStart = 0;
  }
  if (AheadEnd < LookaheadSize) {
    ssize_t N = readRecords(Ahead.get() + AheadEnd, LookaheadSize - AheadEnd);
    if (N > 0)
      AheadEnd += size_t(N);
    else if (AheadEnd == 0)
      return N;
  }
  return ssize_t(AheadEnd);
}

ssize_t TlsStream::peek(char *Dst, size_t Size, bool Wait) {
  for (bool Waited = false;; Waited = true) {
    {
      sync::MutexLock G(Lock);
      size_t Visible = AheadEnd - AheadStart;
      // Waiting, what is visible will do unless OpenSSL holds more.
      bool Enough = Visible >= std::min(Size, LookaheadSize) ||
                    (Wait && Visible > 0 && !::SSL_has_pending(Ssl));
      if (Enough || Visible > 0 || !Wait || !waitFirst(Waited)) {
        ssize_t N = Enough ? ssize_t(Visible) : fillLookahead();
        if (N > 0) {
          size_t Shown = std::min(size_t(N), Size);
          std::memcpy(Dst, Ahead.get() + AheadStart, Shown);
          return ssize_t(Shown);
        }
        if (N == 0 || errno != EAGAIN || !Wait)
          return N;
      }
    }
    if (!waitFor(POLLIN, ReadTimeoutUs.load()))
      return fail(Step::WantRead);
  }
}

bool TlsStream::readable() {
  {
    sync::MutexLock G(Lock);
    if (AheadStart < AheadEnd || ::SSL_has_pending(Ssl))
      return true;
  }
  pollfd P{Fd, POLLIN, 0};
  return ::poll(&P, 1, 0) > 0;
}

bool TlsStream::waitReadable(int Ms) {
  if (readable())
    return true;
  pollfd P{Fd, POLLIN, 0};
  return ::poll(&P, 1, Ms) > 0;
}

void TlsStream::shutdown() {
  // Fails only on a connection already ended, which is what this asks for.
  ::shutdown(Fd, SHUT_RDWR);
}

} // namespace catalyst::remote::wire
