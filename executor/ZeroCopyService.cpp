//===- ZeroCopyService.cpp - Launches in one out-of-line round trip -------===//

#include "ZeroCopyService.h"

#include "CrashReporter.h"
#include "Heartbeat.h"
#include "SharedSlabs.h"
#include "Slabs.h"
#include "wire/MemrefLayout.h"
#include "wire/ReadableMemory.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <sys/uio.h>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote::executor {

using namespace wire;

namespace {

uint64_t nsBetween(std::chrono::steady_clock::time_point A,
                   std::chrono::steady_clock::time_point B) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(B - A).count();
}

Expected<std::vector<Returned>> inspect(const Slabs &Regions, ArrayRef<LaunchOutputSpec> Specs,
                                        char *Rv) {
  std::vector<Returned> Outs;
  ReadableSet Readable;
  {
    auto InSlabs = Regions.hold();
    for (size_t I = 0; I < Specs.size(); ++I) {
      auto [Rank, ElemSize] = Specs[I];
      MemrefDesc D(Rv, Rank);
      Rv += MemrefDesc::byteSize(Rank);
      auto L = layoutOf(D, ElemSize, {"kernel output", I});
      if (!L)
        return L.takeError();
      // The session's slabs (an output that is an input) are mapped for as
      // long as it lasts.
      char *First = static_cast<char *>(D.aligned()) + L->FirstElement * int64_t(ElemSize);
      if (!InSlabs.contains(First, L->SpanBytes))
        Readable.add(D, ElemSize, *L, {"kernel output", I});
      Outs.push_back({D, size_t(ElemSize), *L});
    }
  }
  // Sending from memory that cannot be read would fail part way through the
  // reply, which would then have to end the connection.
  if (auto Err = Readable.check())
    return Err;
  return Outs;
}

// Whether the buffer a kernel handed back, Allocated, is the kernel's to
// give up (to free, or to keep as a resident): never slab memory (inputs),
// never a constant global, never a resident's buffer (an input handed
// back, or an output just kept: Adopted).
bool kernelsOwn(void *Allocated, const Slabs::Held &InSlabs, const ResidentStore &Residents,
                const SmallPtrSetImpl<void *> &Adopted) {
  return Allocated && reinterpret_cast<uintptr_t>(Allocated) != ConstantGlobalMarker &&
         !InSlabs.contains(static_cast<char *>(Allocated), 1) && !Adopted.count(Allocated) &&
         !Residents.holdsBuffer(Allocated);
}

// Frees what the kernel handed back in Rv, once, whether or not its
// descriptors passed inspection: what is the kernel's to give (kernelsOwn).
void freeReturned(const Slabs &Regions, const ResidentStore &Residents,
                  const SmallPtrSetImpl<void *> &Adopted, ArrayRef<LaunchOutputSpec> Specs,
                  char *Rv) {
  SmallPtrSet<void *, 8> Freed;
  auto InSlabs = Regions.hold();
  for (auto [Rank, ElemSize] : Specs) {
    void *P = MemrefDesc(Rv, Rank).allocated();
    Rv += MemrefDesc::byteSize(Rank);
    if (!kernelsOwn(P, InSlabs, Residents, Adopted))
      continue;
    if (Freed.insert(P).second)
      std::free(P);
  }
}

uint64_t clockNs(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(T.time_since_epoch()).count();
}

// What the executor measured of one launch.
struct Timings {
  uint64_t StartNs = 0; // its steady clock when the inputs began to land
  uint64_t CopyInNs = 0, KernelNs = 0, CopyOutNs = 0;
};

std::vector<char> encodeResult(const std::string &Error, ArrayRef<ZeroCopyOutput> Outs,
                               const Timings &T, uint64_t CopyBytes) {
  std::vector<char> Plan(SPSZeroCopyResult::size(Error, Outs, T.CopyInNs, T.KernelNs, T.CopyOutNs,
                                                 CopyBytes, T.StartNs));
  sps::SPSOutputBuffer OB(Plan.data(), Plan.size());
  SPSZeroCopyResult::serialize(OB, Error, Outs, T.CopyInNs, T.KernelNs, T.CopyOutNs, CopyBytes,
                               T.StartNs);
  return Plan;
}

} // namespace

uint32_t ZeroCopyService::enable(uint32_t HostVersion) {
  if (HostVersion == ZeroCopyVersion) {
    Enabled = true;
    return HostVersion;
  }
  RefusedVersion = HostVersion;
  errs() << "catalyst-remote-executor: refusing zero-copy launches from a host speaking version "
         << HostVersion << " (this executor speaks " << ZeroCopyVersion << ")\n";
  return ZeroCopyVersion;
}

Error ZeroCopyService::notEnabled() const {
  if (uint32_t V = RefusedVersion.load())
    return badLaunchRequest("zero-copy launches were refused: the host speaks version " + Twine(V) +
                            ", this executor " + Twine(ZeroCopyVersion));
  return badLaunchRequest("zero-copy launches were not enabled by the host");
}

Error ZeroCopyService::decode(ArrayRef<char> Plan, uint64_t PayloadBytes, const LaunchPath &Path) {
  auto InSlabs = Regions.hold();
  return decodeLaunchPlan(
      Plan, PayloadBytes,
      [&](const char *P, uint64_t Bytes) { return Path.holds(InSlabs, P, Bytes); }, Current,
      Path.inputs());
}

// Messages are read one at a time on the reader thread, so place() and
// finish() of one launch follow each other with no other launch between.
Expected<std::vector<iovec>> ZeroCopyService::place(PayloadOpcode OpC, uint64_t SeqNo,
                                                    ArrayRef<char> Plan, uint64_t PayloadBytes) {
  if (!isLaunchOpcode(OpC))
    return badLaunchRequest("a host sends launches only");
  if (!Enabled)
    return notEnabled();
  LaunchPath &Path =
      OpC == PayloadOpcode::SharedLaunch ? static_cast<LaunchPath &>(SharedPath) : SocketPath;
  if (auto Err = decode(Plan, PayloadBytes, Path))
    return Err;
  if (auto Err = bindResidents())
    return Err;
  Current.Path = &Path;
  std::vector<iovec> Dst;
  Work.PieceOrder.clear();
  size_t NextOrder = 0;
  for (size_t I = 0; I < Current.Inputs.size(); ++I) {
    auto &[ElemSize, Sizes, Dest, Bytes] = Current.Inputs[I];
    if (!Bytes || Path.inputs() == InputSource::InPlace)
      continue;
    bool Reordered =
        NextOrder < Current.Reordered.size() && std::get<0>(Current.Reordered[NextOrder]) == I;
    // A null base: the transport reads the piece through sinkFor().
    Dst.push_back({Reordered ? nullptr : Dest.toPtr<void *>(), size_t(Bytes)});
    Work.PieceOrder.push_back(Reordered ? int(NextOrder++) : -1);
  }
  Current.Arrived = Clock::now();
  return Dst;
}

PayloadSink *ZeroCopyService::sinkFor(size_t Piece) {
  if (Piece >= Work.PieceOrder.size() || Work.PieceOrder[Piece] < 0)
    return nullptr;
  size_t Order = size_t(Work.PieceOrder[Piece]);
  size_t Input = std::get<0>(Current.Reordered[Order]);
  Work.Reordered.start(Current.Orders[Order], std::get<2>(Current.Inputs[Input]).toPtr<char *>());
  return &Work.Reordered;
}

void ZeroCopyService::finish(PayloadOpcode, uint64_t SeqNo, shared::WrapperFunctionBuffer,
                             Error Err) {
  if (Err)
    return replyError(SeqNo, std::move(Err));
  run(SeqNo);
}

// A reply that cannot go leaves the host waiting for it: end the
// connection, which fails the launch on the host, and say why here.
void ZeroCopyService::replyError(uint64_t SeqNo, Error Err) {
  std::string Reason = toString(std::move(Err));
  auto Plan = encodeResult(Reason, {}, Timings(), 0);
  if (auto SendErr = Transport->sendWithPayload(PayloadOpcode::LaunchResult, SeqNo, Plan, {})) {
    errs() << "catalyst-remote-executor: ending the connection: the error reply to launch " << SeqNo
           << " (" << Reason << ") could not be sent: " << toString(std::move(SendErr)) << "\n";
    Transport->disconnect();
  }
}

namespace {

std::string shapeText(uint64_t ElemSize, ArrayRef<int64_t> Sizes) {
  std::string Text = std::to_string(ElemSize) + "-byte elements in [";
  for (size_t K = 0; K < Sizes.size(); ++K)
    Text += (K ? ", " : "") + std::to_string(Sizes[K]);
  return Text + "]";
}

} // namespace

// Each resident input's values are where the store keeps them, in the
// shape the plan says; each kept output gets an id not in use.
Error ZeroCopyService::bindResidents() {
  for (auto &[Index, Id] : Current.ResidentInputs) {
    auto &[ElemSize, Sizes, Dest, Bytes] = Current.Inputs[Index];
    auto R = Residents.get(Id);
    if (!R)
      return badLaunchRequest("input " + Twine(Index) + ": " + toString(R.takeError()));
    if (R->Shape.ElemSize != ElemSize || ArrayRef<int64_t>(R->Shape.Sizes) != ArrayRef(Sizes))
      return badLaunchRequest("input " + Twine(Index) + ": resident " + Twine(Id) + " holds " +
                              shapeText(R->Shape.ElemSize, R->Shape.Sizes) + ", the launch wants " +
                              shapeText(ElemSize, Sizes));
    Dest = ExecutorAddr::fromPtr(R->Data);
  }
  for (auto &[Index, Id] : Current.KeptOutputs)
    if (Residents.find(Id))
      return badLaunchRequest("output " + Twine(Index) + ": resident id " + Twine(Id) +
                              " is in use in this session already");
  return Error::success();
}

// Each kept output becomes a resident: the kernel's own buffer when it is
// dense, its own (malloc'ed) and not kept already, else a dense copy. A
// failure releases what this launch kept, and the launch fails.
Error ZeroCopyService::keepOutputs(ArrayRef<Returned> Outs, SmallPtrSetImpl<void *> &Adopted) {
  auto InSlabs = Regions.hold();
  for (size_t K = 0; K < Current.KeptOutputs.size(); ++K) {
    auto &[Index, Id] = Current.KeptOutputs[K];
    const Returned &O = Outs[Index];
    Shape Sizes;
    for (size_t D = 0; D < O.Desc.rank(); ++D)
      Sizes.push_back(O.Desc.size(D));
    auto Kept = tensorShape(O.ElemSize, Sizes, "a kept output");
    Error Err = Kept.takeError();
    void *Allocated = O.Desc.allocated();
    char *Data = static_cast<char *>(O.Desc.aligned()) + O.Desc.offset() * int64_t(O.ElemSize);
    if (!Err && O.Layout.Dense && kernelsOwn(Allocated, InSlabs, Residents, Adopted)) {
      Err = Residents.adopt(Id, Allocated, Data, *Kept);
      if (!Err)
        Adopted.insert(Allocated);
    } else if (!Err) {
      auto Buffer = Residents.reserve(Id, *Kept);
      if (!Buffer) {
        Err = Buffer.takeError();
      } else if (O.Layout.Dense) {
        std::memcpy(*Buffer, Data, Kept->Bytes);
      } else {
        MemrefPacker Packer(O.Desc, O.ElemSize, O.Layout);
        for (char *To = *Buffer; !Packer.done();)
          To += Packer.pack(To, *Buffer + Kept->Bytes - To);
      }
    }
    if (Err) {
      for (size_t Done = 0; Done < K; ++Done)
        // Kept by this launch a moment ago: there to release.
        consumeError(Residents.release(std::get<1>(Current.KeptOutputs[Done])));
      return createStringError(inconvertibleErrorCode(),
                               "output " + std::to_string(Index) +
                                   " cannot be kept: " + toString(std::move(Err)));
    }
  }
  return Error::success();
}

// Descriptors of the inputs where they landed, and the argument area.
void ZeroCopyService::buildArguments() {
  Scratch &S = Work;
  S.Descs.clear();
  for (auto &[ElemSize, Sizes, Dest, Bytes] : Current.Inputs)
    S.Descs.resize(S.Descs.size() + MemrefDesc::byteSize(Sizes.size()));
  S.Args.clear();
  char *Cursor = S.Descs.data();
  for (auto &[ElemSize, Sizes, Dest, Bytes] : Current.Inputs) {
    MemrefDesc(Cursor, Sizes.size()).describeDense(Sizes, Dest.toPtr<void *>());
    S.Args.push_back(Cursor);
    Cursor += MemrefDesc::byteSize(Sizes.size());
  }
  size_t RvBytes = 0;
  for (auto &[Rank, ElemSize] : Current.Outputs)
    RvBytes += MemrefDesc::byteSize(Rank);
  S.Rv.assign(RvBytes, 0);
}

// What goes back for each output: its shape, and its values straight from
// the kernel's buffer when dense, packed on the fly when not. Returns the
// bytes packed.
uint64_t ZeroCopyService::collectOutputs(ArrayRef<Returned> Outs) {
  Scratch &S = Work;
  S.Shapes.resize(Outs.size()); // kept from launch to launch, shapes and all
  S.Parts.clear();
  S.Packers.clear();
  S.Packers.reserve(Outs.size());
  uint64_t Packed = 0;
  size_t Kept = 0;
  for (size_t I = 0; I < Outs.size(); ++I) {
    const Returned &O = Outs[I];
    auto &[Sizes, Bytes] = S.Shapes[I];
    Sizes.resize(O.Desc.rank());
    for (size_t K = 0; K < Sizes.size(); ++K)
      Sizes[K] = O.Desc.size(K);
    Bytes = O.Layout.Bytes;
    if (Kept < Current.KeptOutputs.size() && std::get<0>(Current.KeptOutputs[Kept]) == I) {
      ++Kept;
      Bytes = 0; // it stays here, as a resident: an empty part, so that a
                 // shared result still gives a place per output
      S.Parts.push_back({nullptr, 0, nullptr});
      continue;
    }
    if (O.Layout.Dense) {
      S.Parts.push_back(
          {static_cast<const char *>(O.Desc.aligned()) + O.Desc.offset() * int64_t(O.ElemSize),
           O.Layout.Bytes, nullptr});
      continue;
    }
    S.Packers.emplace_back(O.Desc, O.ElemSize, O.Layout);
    S.Parts.push_back({nullptr, O.Layout.Bytes, &S.Packers.back()});
    Packed += O.Layout.Bytes;
  }
  return Packed;
}

void ZeroCopyService::run(uint64_t SeqNo) {
  Heartbeat::Busy Working;
  buildArguments();
  quietBeforeKernel();
  auto Start = Clock::now();
  Current.Entry.toPtr<void (*)(void *, void *)>()(Work.Rv.data(), Work.Args.data());
  auto Ran = Clock::now();

  SmallPtrSet<void *, 8> Adopted; // kept outputs' buffers, the store's now
  auto Outs = inspect(Regions, Current.Outputs, Work.Rv.data());
  if (!Outs) {
    freeReturned(Regions, Residents, Adopted, Current.Outputs, Work.Rv.data());
    return replyError(SeqNo, Outs.takeError());
  }
  if (auto Err = keepOutputs(*Outs, Adopted)) {
    freeReturned(Regions, Residents, Adopted, Current.Outputs, Work.Rv.data());
    return replyError(SeqNo, std::move(Err));
  }
  uint64_t Packed = collectOutputs(*Outs);
  for (const SourceOrder &O : Current.Orders)
    Packed += O.bytes(); // transposed as they landed
  // The copy-out time ends once the outputs are where the host reads them.
  Error Err = Current.Path->sendResult(*Transport, SeqNo, Work.Parts, Packed, [&](uint64_t Copied) {
    Timings T{clockNs(Current.Arrived), nsBetween(Current.Arrived, Start), nsBetween(Start, Ran),
              nsBetween(Ran, Clock::now())};
    return encodeResult("", Work.Shapes, T, Copied);
  });
  freeReturned(Regions, Residents, Adopted, Current.Outputs, Work.Rv.data());
  // A send that failed part way ended the connection: nothing more may go.
  if (Err && Transport->disconnected())
    errs() << "catalyst-remote-executor: the result of launch " << SeqNo
           << " could not be sent: " << toString(std::move(Err)) << "\n";
  else if (Err) {
    // A failed launch keeps nothing: its outputs were kept a moment ago.
    for (auto &[Index, Id] : Current.KeptOutputs)
      consumeError(Residents.release(Id));
    replyError(SeqNo, std::move(Err));
  }
}

} // namespace catalyst::remote::executor
