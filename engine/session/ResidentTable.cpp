//===- ResidentTable.cpp - What a session keeps in its executor -----------===//

#include "ResidentTable.h"

#include "catalyst/remote/Failure.h"

using namespace llvm;

namespace catalyst::remote {

namespace {

std::string shapeText(uint64_t ElemSize, size_t Rank) {
  return "rank " + std::to_string(Rank) + ", element size " + std::to_string(ElemSize);
}

} // namespace

ResidentTable::ResidentTable() : Owner(ResidentAccess::newOwner()) {}

void ResidentTable::remove(uint64_t Id) {
  auto It = Held.find(Id);
  if (It == Held.end())
    return;
  HeldBytes -= It->second.Shape.Bytes;
  Held.erase(It);
}

Resident ResidentTable::add(uint64_t Id, const wire::TensorShape &Shape) {
  Record &Rec = Held[Id];
  HeldBytes += Shape.Bytes - Rec.Shape.Bytes; // a fresh record's is 0
  Rec.Shape = Shape;
  size_t Rank = Shape.Sizes.size();
  Rec.Desc.assign(3 + 2 * Rank, 0);
  wire::MemrefDesc(Rec.Desc.data(), Rank).describeDense(Shape.Sizes, nullptr);
  return ResidentAccess::make(Owner, Id, Shape);
}

Expected<uint64_t> ResidentTable::held(const Resident &R, const Twine &What) const {
  if (!R)
    return makeFailure(FailureKind::BadArgument, What + " is an empty handle");
  if (ResidentAccess::owner(R) != Owner)
    return makeFailure(FailureKind::BadArgument,
                       What + ", resident " + Twine(R.id()) +
                           ", belongs to another session: a resident is usable only in the "
                           "session that made it");
  if (!Held.count(R.id()))
    return makeFailure(FailureKind::BadArgument,
                       What + ", resident " + Twine(R.id()) + ", was released");
  return R.id();
}

Expected<CheckedInput> ResidentTable::input(const Resident &R, const MemrefArg &Arg, size_t Index) {
  auto Id = held(R, "input " + Twine(Index));
  if (!Id)
    return Id.takeError();
  Record &Rec = Held.find(*Id)->second;
  size_t Rank = Rec.Shape.Sizes.size();
  if (Arg.Rank != Rank || Arg.ElemSize != Rec.Shape.ElemSize)
    return makeFailure(FailureKind::BadArgument,
                       "input " + Twine(Index) + ": resident " + Twine(*Id) + " has " +
                           shapeText(Rec.Shape.ElemSize, Rank) + "; the launch expects " +
                           shapeText(Arg.ElemSize, Arg.Rank));
  wire::MemrefLayout Empty;
  Empty.Dense = true;
  return CheckedInput{wire::MemrefDesc(Rec.Desc.data(), Rank), Rec.Shape.ElemSize, Empty, *Id};
}

} // namespace catalyst::remote
