//===- PoolResidents.cpp - Tensors a pool keeps on its members ------------===//
//
// An upload goes to every member at once, and its dense bytes stay on the
// host so that a member joining later gets them before its first launch
// (catchUpResidents). Fetches come from a member, as launches' outputs do. An output a launch kept
// lives on the member that ran it; placement() pins a launch that names one to that member. Handles
// are the pool's own (ResidentOwner); onMember() names each to the member's session by that
// session's handle.
//
//===----------------------------------------------------------------------===//

#include "../session/ResidentAccess.h"
#include "PoolImpl.h"
#include "catalyst/remote/Failure.h"
#include "wire/MemrefLayout.h"
#include "wire/ReadableMemory.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstring>
#include <new>

using namespace llvm;

namespace catalyst::remote {

namespace {

// In, checked as a session checks an upload (a descriptor whose values
// are all readable), copied dense and row-major.
Expected<std::shared_ptr<const HostTensor>> hostCopy(const MemrefArg &In) {
  auto Bad = [](Error Err) {
    return makeFailure(FailureKind::BadArgument, toString(std::move(Err)));
  };
  if (!In.Desc)
    return makeFailure(FailureKind::BadArgument, "tensor 0: null descriptor");
  // In the order a session checks an upload: its layout (rank, element
  // size, sizes), its memory, then its shape as the wire carries it.
  size_t Rank = In.Rank;
  wire::MemrefDesc D(In.Desc, Rank);
  auto L = wire::layoutOf(D, In.ElemSize, {"tensor", 0});
  if (!L)
    return Bad(L.takeError());
  if (Error Err = wire::checkReadable(D, In.ElemSize, *L, {"tensor", 0}))
    return Bad(std::move(Err));
  wire::Shape Sizes(Rank);
  for (size_t K = 0; K < Rank; ++K)
    Sizes[K] = D.size(K);
  auto Shape = wire::tensorShape(In.ElemSize, Sizes, "the tensor");
  if (!Shape)
    return Bad(Shape.takeError());
  auto T = std::make_shared<HostTensor>();
  // Not zeroed: every byte is written below.
  T->Bytes.reset(new (std::nothrow) char[std::max<uint64_t>(Shape->Bytes, 1)]);
  if (!T->Bytes)
    return makeFailure(FailureKind::Other, "the host cannot hold the copy it keeps for members "
                                           "that join later: " +
                                               Twine(Shape->Bytes) + " bytes");
  if (L->Dense) {
    if (Shape->Bytes)
      std::memcpy(T->Bytes.get(),
                  static_cast<const char *>(D.aligned()) + L->FirstElement * int64_t(In.ElemSize),
                  Shape->Bytes);
  } else {
    wire::MemrefPacker Packer(D, In.ElemSize, *L);
    uint64_t Done = 0;
    while (!Packer.done() && Done < Shape->Bytes)
      Done += Packer.pack(T->Bytes.get() + Done, Shape->Bytes - Done);
  }
  T->Shape = std::move(*Shape);
  T->Desc.assign(3 + 2 * Rank, 0);
  wire::MemrefDesc(T->Desc.data(), Rank).describeDense(Sizes, T->Bytes.get());
  return T;
}

wire::TensorShape shapeOf(const Resident &R) {
  wire::TensorShape S;
  S.ElemSize = R.elemSize();
  S.Sizes.assign(R.shape().begin(), R.shape().end());
  S.Bytes = R.bytes();
  return S;
}

} // namespace

// The record of R, a handle of this pool's that it still holds; else a
// BadArgument failure naming R as What.
static Expected<const PoolResident *> recordOf(const std::map<uint64_t, PoolResident> &Residents,
                                               uint64_t Owner, const Resident &R,
                                               const Twine &What) {
  if (!R)
    return makeFailure(FailureKind::BadArgument, What + " is an empty handle");
  if (ResidentAccess::owner(R) != Owner)
    return makeFailure(FailureKind::BadArgument,
                       What + ", resident " + Twine(R.id()) +
                           ", belongs to another pool or session: a pool takes only the "
                           "residents it made");
  auto It = Residents.find(R.id());
  if (It == Residents.end())
    return makeFailure(FailureKind::BadArgument,
                       What + ", resident " + Twine(R.id()) + ", was released");
  return &It->second;
}

Error Pool::Impl::lostHome(const Placement &Place) const {
  return makeFailure(FailureKind::ExecutorLost,
                     Address + ": member " + Place.HomeLabel +
                         " was lost, and with it the output kept there that the call names "
                         "(a kept output lives only on the member that made it)");
}

Expected<Resident> Pool::Impl::upload(const MemrefArg &In) {
  auto Fail = [&](Error Err) { return withContext(Address + ": upload failed", std::move(Err)); };
  {
    sync::MutexLock L(M);
    if (Closing)
      return makeFailure(FailureKind::Closed, Address + ": upload: the pool is closed");
  }
  if (In.Kept)
    return Fail(
        makeFailure(FailureKind::BadArgument,
                    "the tensor is a resident already (resident " + Twine(In.Kept->id()) + ")"));
  auto Copy = hostCopy(In);
  if (!Copy)
    return Fail(Copy.takeError());
  std::vector<MemberPtr> All = useAll();
  std::vector<std::optional<Resident>> Made(All.size());
  MemberRefusals Refused = onEach(All, [&](size_t I) -> Error {
    sync::MutexLock Shipping(All[I]->ShipMutex);
    auto R = All[I]->S->upload((*Copy)->arg());
    if (!R)
      return R.takeError();
    Made[I] = std::move(*R);
    return Error::success();
  });
  if (Refused.Count) {
    for (size_t I = 0; I < All.size(); ++I)
      if (Made[I])
        // Freed with its session if this fails: nothing to keep either way.
        consumeError(All[I]->S->release(*Made[I]));
    for (const MemberPtr &Mem : All)
      release(Mem);
    return makeFailure(Refused.Kind, Address + ": upload failed on " + Refused.of(All.size()));
  }
  Resident Handle;
  {
    sync::MutexLock L(M);
    uint64_t Id = NextResident++;
    PoolResident &Rec = Residents[Id];
    Rec.Shape = (*Copy)->Shape;
    Rec.Copy = *Copy;
    for (size_t I = 0; I < All.size(); ++I)
      if (Made[I])
        All[I]->Residents[Id] = *Made[I];
    ++UploadsMade;
    Handle = ResidentAccess::make(ResidentOwner, Id, Rec.Shape);
  }
  for (const MemberPtr &Mem : All)
    release(Mem);
  return Handle;
}

// Sends Mem the pool's uploads it does not hold, one at a time. An upload
// released meanwhile is freed there again.
Error Pool::Impl::catchUpResidents(pool::Member &Mem) {
  if (Mem.UploadsSeen >= UploadsMade)
    return Error::success();
  sync::MutexLock Shipping(Mem.ShipMutex);
  for (;;) {
    uint64_t Id = 0;
    std::shared_ptr<const HostTensor> Copy;
    {
      sync::MutexLock L(M);
      uint64_t Made = UploadsMade;
      for (const auto &[PoolId, Rec] : Residents)
        if (Rec.Copy && !Mem.Residents.count(PoolId)) {
          Id = PoolId;
          Copy = Rec.Copy;
          break;
        }
      if (!Copy) {
        Mem.UploadsSeen = Made;
        return Error::success();
      }
    }
    auto R = Mem.S->upload(Copy->arg());
    if (!R)
      return R.takeError();
    {
      sync::MutexLock L(M);
      if (Residents.count(Id)) {
        Mem.Residents[Id] = *R;
        continue;
      }
    }
    if (Error Err = Mem.S->release(*R))
      return Err;
  }
}

Expected<Placement> Pool::Impl::placement(const LaunchCall &Call) {
  Placement Place;
  if (!Call.namesResidents())
    return Place;
  size_t HomeInput = 0;
  sync::MutexLock L(M);
  for (size_t I = 0; I < Call.Inputs.size(); ++I) {
    const Resident *R = Call.Inputs[I].Kept;
    if (!R)
      continue;
    auto Rec = recordOf(Residents, ResidentOwner, *R, "input " + Twine(I));
    if (!Rec)
      return withContext(Address + ": launch of '" + Call.Entry + "'", Rec.takeError());
    if ((*Rec)->Copy)
      continue;
    if (Place.Home && *Place.Home != (*Rec)->Home)
      return makeFailure(FailureKind::BadArgument,
                         Address + ": launch of '" + Call.Entry + "': input " + Twine(HomeInput) +
                             " was kept on member " + Place.HomeLabel + " and input " + Twine(I) +
                             " on member " + (*Rec)->HomeLabel +
                             "; a launch runs on one member (fetch one, and upload it)");
    Place.Home = (*Rec)->Home;
    Place.HomeLabel = (*Rec)->HomeLabel;
    HomeInput = I;
  }
  if (Place.Home &&
      !llvm::any_of(Members, [&](const MemberPtr &Mem) { return Mem->Order == *Place.Home; }))
    return lostHome(Place);
  return Place;
}

Expected<MemberCall> Pool::Impl::onMember(const LaunchCall &Call, const MemberPtr &Mem) {
  MemberCall Ran;
  Ran.Inputs.assign(Call.Inputs.begin(), Call.Inputs.end());
  // Inputs point into Named: it must not grow past this.
  Ran.Named.reserve(Ran.Inputs.size());
  {
    sync::MutexLock L(M);
    for (size_t I = 0; I < Ran.Inputs.size(); ++I) {
      const Resident *R = Ran.Inputs[I].Kept;
      if (!R)
        continue;
      auto Rec = recordOf(Residents, ResidentOwner, *R, "input " + Twine(I));
      if (!Rec)
        return withContext(Address + ": launch of '" + Call.Entry + "'", Rec.takeError());
      auto Theirs = Mem->Residents.find(R->id());
      if (Theirs == Mem->Residents.end())
        return makeFailure(FailureKind::Other, Address + ": launch of '" + Call.Entry +
                                                   "': input " + Twine(I) + ", resident " +
                                                   Twine(R->id()) + ", is not on member " +
                                                   Mem->label() + ", which runs it");
      Ran.Named.push_back(Theirs->second);
      Ran.Inputs[I].Kept = &Ran.Named.back();
    }
  }
  if (!Call.Keep.empty()) {
    Ran.Kept.resize(Call.Keep.size());
    Ran.Keep.assign(Call.Keep.size(), nullptr);
    for (size_t I = 0; I < Call.Keep.size(); ++I)
      if (Call.Keep[I])
        Ran.Keep[I] = &Ran.Kept[I];
  }
  Ran.Call = Call;
  Ran.Call.Inputs = Ran.Inputs;
  Ran.Call.Keep = Ran.Keep;
  return Ran;
}

// Records the outputs Ran kept on Mem as the pool's, and hands the caller
// their handles.
void Pool::Impl::adoptKept(const LaunchCall &Call, MemberCall &Ran, const MemberPtr &Mem) {
  if (Call.Keep.empty())
    return;
  sync::MutexLock L(M);
  for (size_t I = 0; I < Call.Keep.size(); ++I) {
    if (!Call.Keep[I])
      continue;
    uint64_t Id = NextResident++;
    PoolResident &Rec = Residents[Id];
    Rec.Shape = shapeOf(Ran.Kept[I]);
    Rec.Home = Mem->Order;
    Rec.HomeLabel = Mem->label();
    Mem->Residents[Id] = Ran.Kept[I];
    *Call.Keep[I] = ResidentAccess::make(ResidentOwner, Id, Rec.Shape);
  }
}

// From a member that holds R: a kept output's, or for an upload any
// healthy one (caught up first when none has it yet).
Error Pool::Impl::fetch(const Resident &R, const MemrefArg &Out, MutableArrayRef<char> Into) {
  std::string What = Address + ": fetch of resident " + std::to_string(R.id()) + " failed";
  // Out's descriptor is zeroed on every failure, as a session's fetch does.
  auto Fail = [&](Error Err) {
    if (Out.Desc)
      std::memset(Out.Desc, 0, wire::MemrefDesc::byteSize(Out.Rank));
    return Err;
  };
  MemberPtr Mem;
  bool Kept = false;
  {
    sync::MutexLock L(M);
    if (Closing)
      return Fail(makeFailure(FailureKind::Closed, What + ": the pool is closed"));
    auto Rec = recordOf(Residents, ResidentOwner, R, "the resident to fetch");
    if (!Rec)
      return Fail(withContext(What, Rec.takeError()));
    Kept = !(*Rec)->Copy;
    for (const MemberPtr &Each : Members)
      if (Kept ? Each->Order == (*Rec)->Home : Each->Residents.count(R.id()) != 0) {
        Mem = Each;
        break;
      }
    if (!Mem && Kept)
      return Fail(withContext(What, lostHome({(*Rec)->Home, (*Rec)->HomeLabel})));
    if (Mem)
      hold(*Mem);
  }
  if (!Mem) {
    auto Any = pick({}, /*Oldest=*/true);
    if (!Any)
      return Fail(withContext(What, Any.takeError()));
    Mem = *Any;
    if (!caughtUp(Mem)) {
      release(Mem);
      return Fail(makeFailure(FailureKind::ExecutorLost,
                              What + ": member " + Mem->label() + " could not take it"));
    }
  }
  Resident Theirs;
  {
    sync::MutexLock L(M);
    auto It = Mem->Residents.find(R.id());
    if (It != Mem->Residents.end())
      Theirs = It->second;
  }
  // The member's session fills Out, or zeroes it on failure (an empty
  // handle, when R was released meanwhile, included).
  Error Err = Mem->S->fetch(Theirs, Out, Into);
  bool Lost = Err && !Mem->S->connected();
  release(Mem);
  if (Lost)
    return makeFailure(FailureKind::ExecutorLost,
                       What + ": member " + Mem->label() +
                           ", which holds it, was lost: " + toString(std::move(Err)));
  return withContext(What + ": on member " + Mem->label(), std::move(Err));
}

Error Pool::Impl::releaseResident(Resident &R) {
  std::vector<MemberPtr> All;
  std::vector<Resident> Theirs;
  uint64_t Id = R.id();
  {
    sync::MutexLock L(M);
    auto Rec = recordOf(Residents, ResidentOwner, R, "the resident to release");
    if (!Rec)
      return withContext(Address + ": release failed", Rec.takeError());
    Residents.erase(Id);
    for (const MemberPtr &Mem : Members) {
      auto It = Mem->Residents.find(Id);
      if (It == Mem->Residents.end())
        continue;
      hold(*Mem);
      All.push_back(Mem);
      Theirs.push_back(It->second);
      Mem->Residents.erase(It);
    }
    // Dropped members' sessions free theirs as they close.
    for (const MemberPtr &Mem : Former)
      Mem->Residents.erase(Id);
  }
  R = Resident();
  // A member lost meanwhile freed its copy with its connection.
  MemberRefusals Refused = onEach(All, [&](size_t I) { return All[I]->S->release(Theirs[I]); });
  for (const MemberPtr &Mem : All)
    release(Mem);
  if (!Refused.Count)
    return Error::success();
  return makeFailure(Refused.Kind, Address + ": release of resident " + std::to_string(Id) +
                                       " failed on " + Refused.of(All.size()));
}

} // namespace catalyst::remote
