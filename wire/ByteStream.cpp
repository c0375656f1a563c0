//===- ByteStream.cpp - The bytes beneath the framing ---------------------===//

#include "ByteStream.h"

#include "SocketTimeouts.h"

#include <cassert>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

// Puts Descriptors (SCM_RIGHTS) in Msg, using Control for them.
void attachDescriptors(msghdr &Msg, char *Control, ArrayRef<int> Descriptors) {
  Msg.msg_control = Control;
  Msg.msg_controllen = CMSG_SPACE(sizeof(int) * Descriptors.size());
  cmsghdr *C = CMSG_FIRSTHDR(&Msg);
  C->cmsg_level = SOL_SOCKET;
  C->cmsg_type = SCM_RIGHTS;
  C->cmsg_len = CMSG_LEN(sizeof(int) * Descriptors.size());
  std::memcpy(CMSG_DATA(C), Descriptors.data(), sizeof(int) * Descriptors.size());
}

} // namespace

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

ByteStream::ByteStream(int Fd, std::unique_ptr<TlsStream> Tls, bool AcceptDescriptors)
    : Fd(Fd), Tls(std::move(Tls)), AcceptDescriptors(AcceptDescriptors) {}

ByteStream::~ByteStream() {
  closeDescriptors();
  ::close(Fd);
}

// MSG_NOSIGNAL: a dead peer must surface as an error, not as SIGPIPE in
// the embedding process.
ssize_t ByteStream::send(const iovec *Iov, int Count, ArrayRef<int> Descriptors) {
  if (Tls) {
    assert(Descriptors.empty() && "descriptors do not travel over TLS");
    return Tls->write(Iov, Count);
  }
  alignas(cmsghdr) char Control[CMSG_SPACE(sizeof(int) * MaxDescriptors)];
  assert(Descriptors.size() <= MaxDescriptors && "the peer takes no more");
  msghdr Msg{};
  Msg.msg_iov = const_cast<iovec *>(Iov);
  Msg.msg_iovlen = Count;
  if (!Descriptors.empty())
    attachDescriptors(Msg, Control, Descriptors);
  return ::sendmsg(Fd, &Msg, MSG_NOSIGNAL);
}

// Whichever receive consumes a message's first byte gets the descriptors
// sent with it.
ssize_t ByteStream::receive(iovec *Iov, int Count) {
  if (Tls)
    return Tls->read(Iov, Count);
  if (!AcceptDescriptors)
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
// those that fit are kept, within the same bound.
void ByteStream::keepDescriptors(msghdr &M) {
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

void ByteStream::closeDescriptors() {
  for (int D : Passed)
    ::close(D);
  Passed.clear();
}

ssize_t ByteStream::peek(char *Dst, size_t Size, bool Wait) {
  if (Tls)
    return Tls->peek(Dst, Size, Wait);
  return ::recv(Fd, Dst, Size, MSG_PEEK | (Wait ? 0 : MSG_DONTWAIT));
}

bool ByteStream::readable() {
  if (Tls)
    return Tls->readable();
  pollfd P{Fd, POLLIN, 0};
  return ::poll(&P, 1, 0) > 0;
}

bool ByteStream::waitReadable(int Ms) {
  if (Tls)
    return Tls->waitReadable(Ms);
  pollfd P{Fd, POLLIN, 0};
  return ::poll(&P, 1, Ms) > 0;
}

void ByteStream::setTimeouts(std::chrono::milliseconds Read, std::chrono::microseconds Send) {
  if (Tls) {
    Tls->setReadTimeout(Read);
    Tls->setSendTimeout(Send);
    return;
  }
  setReadTimeout(Fd, Read);
  setSendTimeout(Fd, Send);
}

void ByteStream::clearReadTimeout() {
  if (Tls)
    Tls->setReadTimeout(std::chrono::microseconds(0));
  else
    wire::clearReadTimeout(Fd);
}

void ByteStream::shutdown(int How) {
  // Fails only on a connection already ended, which is what this asks for.
  ::shutdown(Fd, How);
}

std::string ByteStream::protection() const {
  return Tls ? Tls->description() : std::string("plain");
}

} // namespace catalyst::remote::wire
