//===- SocketTransportPayloads.cpp - Out-of-line payloads -------------------===//
//
// Payload messages (SocketTransport.h): sending a plan and its parts from
// the caller's memory, strided parts packed in bounded chunks; receiving
// the plan, then the payload straight into the places the handler gives,
// or through its sinks, or drained when it has none.
//
//===----------------------------------------------------------------------===//

#include "SocketTransport.h"

#include "llvm/Support/Endian.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <mimalloc.h>
#include <sys/uio.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::wire {

namespace {

// The plan of a payload message is small; the payload is what may be large.
constexpr uint64_t MaxPlanSize = 64 << 20;

// Strided payloads are packed into scratch of 1 MiB, or as much as a
// transposed view needs to read its source lines whole, up to 16 MiB; a
// transposed view of up to 64 MiB whole, which the packer copies in source
// order, faster (pack/transposed/<size> in benchmarks/PackBench.cpp). The
// scratch is kept for the next send.
constexpr size_t ChunkSize = 1 << 20;

constexpr size_t MaxChunkSize = 16 << 20;

constexpr size_t MaxWholeChunkSize = 64 << 20;

} // namespace

PayloadHandler::~PayloadHandler() = default;

PayloadSink::~PayloadSink() = default;

PayloadSink *PayloadHandler::sinkFor(size_t) {
  return nullptr;
}

void SocketTransport::MiFree::operator()(char *P) const {
  mi_free(P);
}

// Fills Dst (scratch, joined in place like a send's) from the socket.
Error SocketTransport::readInto(MutableArrayRef<iovec> Dst) {
  iovec *Iov = Dst.data();
  int Count = joinAdjacent(Dst.data(), Dst.size());
  uint64_t Seen = MovedOut.load(std::memory_order_relaxed);
  while (Count > 0) {
    ssize_t N = Stream.receive(Iov, std::min(Count, IOV_MAX));
    if (Stream.tooManyDescriptors())
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
  if (!H.Consumed && HeaderSize + PlanSize <= H.Visible) {
    Plan = shared::WrapperFunctionBuffer::copyFrom(H.Bytes + HeaderSize, PlanSize);
    return HeaderSize + PlanSize;
  }
  if (auto Err = readBody(H, PlanSize, Plan))
    return Err;
  H.Consumed = true;
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
  if ((OpC == PayloadOpcode::LaunchResult || OpC == PayloadOpcode::SharedResult) &&
      Opts.BeforeReply)
    Opts.BeforeReply();
  char Header[HeaderSize];
  encodeHeader(Header, MsgSize, static_cast<SimpleRemoteEPCOpcode>(OpC), SeqNo,
               ExecutorAddr(Plan.size()));
  SmallVector<iovec, 8> Iov = {{Header, HeaderSize}};
  if (!Plan.empty())
    Iov.push_back({const_cast<char *>(Plan.data()), Plan.size()});
  sync::MutexLock Lock(SendMutex);
  if (Disconnected)
    return createStringError(inconvertibleErrorCode(), "connection already closed");
  if (isLaunchOpcode(OpC))
    Requests.fetch_add(1, std::memory_order_relaxed);
  Mailbox *B = PostToPeer.load(std::memory_order_relaxed) ? Mail.load() : nullptr;
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

} // namespace catalyst::remote::wire
