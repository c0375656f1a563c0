//===- ByteStream.h - The bytes beneath the framing -------------*- C++ -*-===//
//
// The transport's one way to its connected socket: sends, receives, peeks,
// readiness and timeouts, over the socket itself or through TLS records
// (TlsStream.h) on it, with the socket's semantics either way: a send
// moves at least a byte, a receive returns what has arrived, and both give
// up with EAGAIN once their timeout passed without a byte. Over a Unix
// socket, descriptors can travel with the bytes (SCM_RIGHTS).
//
//   ByteStream S(Fd, std::move(Tls), /*AcceptDescriptors=*/false);
//   ssize_t N = S.send(Iov, Count);        // -1 and errno on failure
//   N = S.receive(Iov, Count);             // 0: the stream ended
//
// Owns the socket, closed when the stream goes. Thread safety: one thread
// receives (and peeks) at a time, one sends at a time (the transport's
// ReadMutex and SendMutex); the two may run at once. Passed descriptors
// are the receiving thread's. The rest may be called from any thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_BYTESTREAM_H
#define CATALYST_REMOTE_WIRE_BYTESTREAM_H

#include "TlsStream.h"

#include "llvm/ADT/ArrayRef.h"

#include <chrono>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

struct iovec;
struct msghdr;

namespace catalyst::remote::wire {

class ByteStream {
public:
  // Most descriptors one receive may bring; more mark the stream
  // (tooManyDescriptors()).
  static constexpr size_t MaxDescriptors = 4;

  // Takes Fd, a connected socket, and Tls, a TLS stream on it or null.
  // Without AcceptDescriptors the kernel drops any the peer sends.
  ByteStream(int Fd, std::unique_ptr<TlsStream> Tls, bool AcceptDescriptors);
  ~ByteStream();
  ByteStream(const ByteStream &) = delete;
  ByteStream &operator=(const ByteStream &) = delete;

  // Sends from Count pieces, at least a byte: the bytes sent, or -1 with
  // errno (EAGAIN: the send timeout passed). Descriptors go with the first
  // byte; not over TLS. Never raises SIGPIPE.
  ssize_t send(const iovec *Iov, int Count, llvm::ArrayRef<int> Descriptors = {});
  // Fills Count pieces with what has arrived, waiting up to the read
  // timeout for a byte: the bytes read, 0 at the end of the stream, or -1
  // with errno. Descriptors that came with them are kept.
  ssize_t receive(iovec *Iov, int Count);
  // Copies up to Size bytes of what comes next to Dst without consuming
  // them; with Wait, waits as receive() does for the first.
  ssize_t peek(char *Dst, size_t Size, bool Wait);
  // Whether a receive would find a byte (or the end) without waiting.
  bool readable();
  // Waits up to Ms (negative: for ever) until readable().
  bool waitReadable(int Ms);

  // Zero: wait for ever.
  void setTimeouts(std::chrono::milliseconds Read, std::chrono::microseconds Send);
  void clearReadTimeout();
  // Ends the stream one way or both (SHUT_WR, SHUT_RDWR), waking a
  // receiver that waits.
  void shutdown(int How);

  // The descriptors kept since the last take, now the caller's.
  std::vector<int> takeDescriptors() { return std::exchange(Passed, {}); }
  void closeDescriptors();
  // More than MaxDescriptors came with one message.
  bool tooManyDescriptors() const { return TooManyPassed; }

  // The TLS stream, or null for plain bytes.
  const TlsStream *tls() const { return Tls.get(); }
  // "plain", or the TLS version and cipher suite.
  std::string protection() const;
  int fd() const { return Fd; }

private:
  void keepDescriptors(msghdr &M);

  const int Fd;
  const std::unique_ptr<TlsStream> Tls;
  const bool AcceptDescriptors;
  // The receiving thread's.
  std::vector<int> Passed;
  bool TooManyPassed = false;
};

// Joins pieces that continue one another (slices of one buffer, inputs
// placed back to back in a slab) and drops empty ones, in place: each
// piece costs the kernel a step per call. Returns the pieces left.
int joinAdjacent(iovec *Iov, int Count);

} // namespace catalyst::remote::wire

#endif
