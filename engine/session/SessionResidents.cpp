//===- SessionResidents.cpp - Tensors a session keeps in its executor -----===//
//
// Session::upload, fetch and release (catalyst/remote/Resident.h), each
// one round trip in the session's launch turn, and what a launch does for
// residents: ids for the outputs it keeps, their handles once it
// succeeded. Every handle and descriptor is checked here first, so that
// the executor only ever hears of ids this session made and holds.
//
//===----------------------------------------------------------------------===//

#include "../transfer/HostOutputs.h"
#include "../transfer/ResidentRequests.h"
#include "LaunchArguments.h"
#include "SessionImpl.h"
#include "WireCounters.h"
#include "catalyst/remote/Failure.h"
#include "wire/MemrefLayout.h"
#include "wire/Residents.h"

#include <optional>

using namespace llvm;

namespace catalyst::remote {

Expected<ResidentRequests *> Session::Impl::residentRequests() {
  if (Chosen != Strategy::ZeroCopy)
    return makeFailure(FailureKind::BadArgument,
                       Twine("resident tensors need the zerocopy strategy; this session's is ") +
                           strategyName(Chosen) + " (SessionOptions::Strategy)");
  if (ResidentRequests *R = Active->residents())
    return R;
  return makeFailure(FailureKind::BadArgument,
                     "the executor at " + Address +
                         " keeps no resident tensors (it is older than this host, or not "
                         "catalyst-remote's)");
}

Expected<wire::ResidentReply>
Session::Impl::countedRequest(ResidentRequests &Requests, wire::PayloadOpcode OpC,
                              ArrayRef<char> Plan, ArrayRef<wire::PayloadPart> Parts,
                              LaunchStats &S, MutableArrayRef<char> Into) {
  auto Before = WireCounters::of(*Transport);
  auto Reply = Requests.request(OpC, Plan, Parts, S, Into);
  WireCounters::of(*Transport).addDelta(Before, S);
  return Reply;
}

void Session::Impl::countResidents(function_ref<void(ResidentStats &)> Count) {
  sync::MutexLock Counting(StatsMutex);
  Count(Stats.Residents);
  Stats.Residents.Held = Residents.size();
  Stats.Residents.HeldBytes = Residents.heldBytes();
}

// Each resident call in the launch turn, traced whole as a launch is, its
// traffic counted as a launch's is.
Expected<Resident> Session::Impl::upload(const MemrefArg &In) {
  sync::MutexLock Lock(LaunchMutex);
  TraceSlot::Held Trace = Tracing.take();
  auto Start = PhaseClock::now();
  LaunchStats S;
  uint64_t Bytes = 0;
  auto R = uploadMeasured(In, S, Bytes);
  Error Err = R ? Error::success() : R.takeError();
  if (Trace)
    Trace->residentCall({"upload", R ? R->id() : 0, Bytes, S, Start, messageOf(Err)});
  if (Err)
    return Err;
  countResidents([&](ResidentStats &C) {
    ++C.Uploads;
    C.UploadedBytes += Bytes;
  });
  return R;
}

Expected<Resident> Session::Impl::uploadMeasured(const MemrefArg &In, LaunchStats &S,
                                                 uint64_t &Bytes) {
  auto Fail = [](Error Err) { return withContext("upload failed", std::move(Err)); };
  auto Requests = residentRequests();
  if (!Requests)
    return Fail(Requests.takeError());
  if (In.Kept)
    return Fail(
        makeFailure(FailureKind::BadArgument,
                    "the tensor is a resident already (resident " + Twine(In.Kept->id()) + ")"));
  auto Checked = checkInputs({In}, nullptr, "tensor");
  if (!Checked)
    return Fail(Checked.takeError());
  const CheckedInput &C = Checked->front();
  wire::Shape Sizes(C.Desc.rank());
  for (size_t K = 0; K < Sizes.size(); ++K)
    Sizes[K] = C.Desc.size(K);
  auto Shape = wire::tensorShape(C.ElemSize, Sizes, "the tensor");
  if (!Shape)
    return Fail(makeFailure(FailureKind::BadArgument, toString(Shape.takeError())));
  uint64_t Message = Transfer::messageCarrying(*Checked);
  if (Message > Opts.MaxMessageSize)
    return Fail(makeFailure(FailureKind::BadArgument, "the tensor needs a message of about " +
                                                          Twine(Message) + " bytes; the limit is " +
                                                          Twine(Opts.MaxMessageSize) +
                                                          " (SessionOptions::MaxMessageSize)"));
  // Sent dense, in row-major order: straight from the caller's memory when
  // it is so already, else packed in bounded chunks as it goes.
  std::optional<wire::MemrefPacker> Packer;
  wire::PayloadPart Part{nullptr, C.Layout.Bytes, nullptr};
  if (C.Layout.Dense) {
    Part.Data =
        static_cast<const char *>(C.Desc.aligned()) + C.Layout.FirstElement * int64_t(C.ElemSize);
  } else {
    Packer.emplace(C.Desc, C.ElemSize, C.Layout);
    Part.Packer = &*Packer;
  }
  uint64_t Id = Residents.nextId();
  Bytes = Shape->Bytes;
  auto Reply = countedRequest(**Requests, wire::PayloadOpcode::Upload,
                              wire::encodeUploadPlan(Id, C.ElemSize, Sizes), Part, S);
  if (!Reply)
    return explain(Reply.takeError(), "upload failed");
  if (!Reply->Error.empty())
    return Fail(createStringError(inconvertibleErrorCode(), "the executor refused it: %s",
                                  Reply->Error.c_str()));
  if (Reply->Shape.ElemSize != Shape->ElemSize || Reply->Shape.Sizes != Shape->Sizes)
    return Fail(createStringError(inconvertibleErrorCode(),
                                  "the executor says it keeps resident %llu in another shape than "
                                  "the one sent",
                                  (unsigned long long)Id));
  return Residents.add(Id, *Shape);
}

Error Session::Impl::keepOutputs(const LaunchCall &Call, HostOutputs &Outputs) {
  auto Requests = residentRequests();
  if (!Requests)
    return Requests.takeError();
  for (size_t I = 0; I < Call.Keep.size(); ++I)
    if (Call.Keep[I])
      Outputs.keep(I, Residents.nextId());
  return Error::success();
}

uint64_t Session::Impl::recordKept(const LaunchCall &Call, const HostOutputs &Outputs) {
  uint64_t Kept = 0, Bytes = 0;
  for (size_t I = 0; I < Call.Keep.size(); ++I) {
    uint64_t Id = Outputs.keptAs(I);
    if (!Id)
      continue;
    const MemrefArg &Out = Call.Outputs[I];
    wire::MemrefDesc D(Out.Desc, Out.Rank);
    wire::TensorShape Shape;
    Shape.ElemSize = Out.ElemSize;
    for (size_t K = 0; K < Out.Rank; ++K)
      Shape.Sizes.push_back(D.size(K));
    // The result's shape passed HostOutputs::keptShape(), which counts its
    // bytes the same way, before the launch could succeed.
    Shape.Bytes = cantFail(Outputs.bytesOf(I, Shape.Sizes));
    *Call.Keep[I] = Residents.add(Id, Shape);
    ++Kept;
    Bytes += Shape.Bytes;
  }
  if (Kept)
    countResidents([&](ResidentStats &C) { C.KeptOutputs += Kept; });
  return Bytes;
}

void Session::Impl::forgetKept(const HostOutputs &Outputs) {
  std::vector<uint64_t> Ids;
  for (size_t I = 0; I < Outputs.size(); ++I)
    if (uint64_t Id = Outputs.keptAs(I))
      Ids.push_back(Id);
  // A connection that ended freed whatever the executor kept.
  if (Ids.empty() || Transport->disconnected())
    return;
  LaunchStats S;
  auto Reply = Active->residents()->request(wire::PayloadOpcode::Release,
                                            wire::encodeResidentIds(Ids), {}, S);
  // The launch's failure is what its caller hears. An executor that refused
  // the launch kept nothing, and says so in the reply; one whose result
  // this host could not take kept them, and this frees them. A request
  // that failed ended the connection, which frees them too.
  if (!Reply)
    consumeError(Reply.takeError());
}

Error Session::Impl::fetch(const Resident &R, const MemrefArg &Out, MutableArrayRef<char> Into) {
  MutableArrayRef<char> Lent[] = {Into};
  HostOutputs Outputs(ArrayRef<MemrefArg>(Out), Opts.Outputs,
                      Into.data() ? ArrayRef<MutableArrayRef<char>>(Lent)
                                  : ArrayRef<MutableArrayRef<char>>(),
                      nullptr, Opts.MaxOutputBytes);
  sync::MutexLock Lock(LaunchMutex);
  TraceSlot::Held Trace = Tracing.take();
  auto Start = PhaseClock::now();
  LaunchStats S;
  uint64_t Bytes = 0;
  Error Err = fetchMeasured(R, Outputs, S, Bytes);
  if (Trace)
    Trace->residentCall({"fetch", R.id(), Bytes, S, Start, messageOf(Err)});
  if (Err)
    return Err;
  Outputs.commit();
  countResidents([&](ResidentStats &C) {
    ++C.Fetches;
    C.FetchedBytes += Bytes;
  });
  return Error::success();
}

Error Session::Impl::fetchMeasured(const Resident &R, HostOutputs &Outputs, LaunchStats &S,
                                   uint64_t &Bytes) {
  std::string What = "fetch of resident " + std::to_string(R.id()) + " failed";
  const MemrefArg &Out = Outputs[0];
  auto Id = Residents.held(R, "the resident to fetch");
  if (!Id)
    return withContext(What, Id.takeError());
  const wire::TensorShape &Shape = Residents.shapeOf(*Id);
  Bytes = Shape.Bytes;
  if (!Out.Desc || Out.Rank != Shape.Sizes.size() || Out.ElemSize != Shape.ElemSize)
    return makeFailure(FailureKind::BadArgument,
                       What + ": the output has rank " + Twine(Out.Rank) + ", element size " +
                           Twine(Out.ElemSize) + (Out.Desc ? "" : " and no descriptor") +
                           "; the resident has rank " + Twine(Shape.Sizes.size()) +
                           ", element size " + Twine(Shape.ElemSize));
  auto Requests = residentRequests();
  if (!Requests) // not while the table holds one; said rather than assumed
    return withContext(What, Requests.takeError());
  auto Buffer = Outputs.allocate(0, Shape.Sizes);
  if (!Buffer)
    return withContext(What, Buffer.takeError());
  auto Reply = countedRequest(**Requests, wire::PayloadOpcode::Fetch,
                              wire::encodeResidentIds({*Id}), {}, S, *Buffer);
  if (!Reply)
    return explain(Reply.takeError(), What);
  if (!Reply->Error.empty())
    return createStringError(inconvertibleErrorCode(), "%s: the executor says: %s", What.c_str(),
                             Reply->Error.c_str());
  if (Reply->Shape.ElemSize != Shape.ElemSize || Reply->Shape.Sizes != Shape.Sizes)
    return createStringError(inconvertibleErrorCode(),
                             "%s: the executor sent it in another shape than it was kept in",
                             What.c_str());
  return Error::success();
}

Error Session::Impl::release(Resident &R) {
  sync::MutexLock Lock(LaunchMutex);
  TraceSlot::Held Trace = Tracing.take();
  auto Start = PhaseClock::now();
  LaunchStats S;
  uint64_t Id = R.id(), Bytes = 0;
  Error Err = releaseMeasured(R, S, Bytes);
  if (Trace)
    Trace->residentCall({"release", Id, Bytes, S, Start, messageOf(Err)});
  // Counted once the session forgot the id, whatever the executor said.
  if (Id && !R)
    countResidents([](ResidentStats &C) { ++C.Releases; });
  return Err;
}

Error Session::Impl::releaseMeasured(Resident &R, LaunchStats &S, uint64_t &Bytes) {
  auto Id = Residents.held(R, "the resident to release");
  if (!Id)
    return withContext("release failed", Id.takeError());
  auto Requests = residentRequests();
  if (!Requests) // not while the table holds one; said rather than assumed
    return withContext("release failed", Requests.takeError());
  Bytes = Residents.shapeOf(*Id).Bytes;
  auto Reply = countedRequest(**Requests, wire::PayloadOpcode::Release,
                              wire::encodeResidentIds({*Id}), {}, S);
  // Forgotten whatever the outcome: released, or gone with a connection
  // that failed, or unknown to an executor that says so below.
  Residents.remove(*Id);
  R = Resident();
  std::string What = "release of resident " + std::to_string(*Id) + " failed";
  if (!Reply)
    return explain(Reply.takeError(), What);
  if (!Reply->Error.empty())
    return createStringError(inconvertibleErrorCode(), "%s: the executor says: %s", What.c_str(),
                             Reply->Error.c_str());
  return Error::success();
}

} // namespace catalyst::remote
