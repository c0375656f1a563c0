//===- Residents.cpp - Tensors kept in the executor, on the wire ----------===//

#include "wire/Residents.h"

#include "wire/MemrefLayout.h"
#include "wire/SpsCheck.h"

using namespace llvm;

namespace catalyst::remote::wire {

namespace {

Error malformed(const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "malformed " + What);
}

template <typename Tag, typename... Ts> std::vector<char> encode(const Ts &...Values) {
  std::vector<char> Bytes(Tag::size(Values...));
  sps::SPSOutputBuffer OB(Bytes.data(), Bytes.size());
  [[maybe_unused]] bool Ok = Tag::serialize(OB, Values...);
  assert(Ok && "sized by SPS itself");
  return Bytes;
}

} // namespace

Expected<TensorShape> tensorShape(uint64_t ElemSize, ArrayRef<int64_t> Sizes, const char *What) {
  TensorShape S;
  S.ElemSize = ElemSize;
  S.Sizes.assign(Sizes.begin(), Sizes.end());
  if (ElemSize == 0)
    return malformed(Twine(What) + ": an element size of 0");
  if (Sizes.size() > MaxRank)
    return malformed(Twine(What) + ": rank " + Twine(Sizes.size()) + ", above " + Twine(MaxRank));
  S.Bytes = ElemSize;
  for (int64_t Size : Sizes)
    if (Size < 0 || __builtin_mul_overflow(S.Bytes, uint64_t(Size), &S.Bytes))
      return malformed(Twine(What) + ": a size of " + Twine(Size) + " in its shape");
  return S;
}

Expected<UploadPlan> decodeUploadPlan(ArrayRef<char> Plan, uint64_t PayloadBytes) {
  if (!spsWellFormed<SPSUploadPlan>(Plan.data(), Plan.size()))
    return malformed("upload: its plan does not decode");
  uint64_t Id = 0, ElemSize = 0;
  Shape Sizes;
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (!SPSUploadPlan::deserialize(IB, Id, ElemSize, Sizes))
    return malformed("upload: its plan does not decode");
  if (Id == 0)
    return malformed("upload: resident id 0");
  auto S = tensorShape(ElemSize, Sizes, "upload");
  if (!S)
    return S.takeError();
  if (S->Bytes != PayloadBytes)
    return malformed("upload: its shape takes " + Twine(S->Bytes) + " bytes, its payload " +
                     Twine(PayloadBytes));
  return UploadPlan{Id, std::move(*S)};
}

std::vector<char> encodeUploadPlan(uint64_t Id, uint64_t ElemSize, ArrayRef<int64_t> Sizes) {
  return encode<SPSUploadPlan>(Id, ElemSize, Sizes);
}

Expected<std::vector<uint64_t>> decodeResidentIds(ArrayRef<char> Plan, size_t Most) {
  if (!spsWellFormed<SPSResidentIds>(Plan.data(), Plan.size()))
    return malformed("resident request: its ids do not decode");
  std::vector<uint64_t> Ids;
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (!SPSResidentIds::deserialize(IB, Ids))
    return malformed("resident request: its ids do not decode");
  if (Ids.empty() || Ids.size() > Most)
    return malformed("resident request: " + Twine(Ids.size()) + " ids, where 1 to " + Twine(Most) +
                     " may come");
  for (uint64_t Id : Ids)
    if (Id == 0)
      return malformed("resident request: resident id 0");
  return Ids;
}

std::vector<char> encodeResidentIds(ArrayRef<uint64_t> Ids) {
  return encode<SPSResidentIds>(Ids);
}

Expected<ResidentReply> decodeResidentReply(ArrayRef<char> Plan, uint64_t PayloadBytes) {
  if (!spsWellFormed<SPSResidentReply>(Plan.data(), Plan.size()))
    return malformed("resident reply from the executor: it does not decode");
  ResidentReply R;
  uint64_t ElemSize = 0;
  Shape Sizes;
  sps::SPSInputBuffer IB(Plan.data(), Plan.size());
  if (!SPSResidentReply::deserialize(IB, R.Error, ElemSize, Sizes))
    return malformed("resident reply from the executor: it does not decode");
  if (!R.Error.empty()) {
    if (PayloadBytes)
      return malformed("resident reply from the executor: an error with a payload of " +
                       Twine(PayloadBytes) + " bytes");
    return R;
  }
  if (ElemSize == 0 && Sizes.empty() && PayloadBytes == 0)
    return R; // a release's: no tensor
  auto S = tensorShape(ElemSize, Sizes, "resident reply from the executor");
  if (!S)
    return S.takeError();
  if (PayloadBytes && PayloadBytes != S->Bytes)
    return malformed("resident reply from the executor: its shape takes " + Twine(S->Bytes) +
                     " bytes, its payload " + Twine(PayloadBytes));
  R.Shape = std::move(*S);
  return R;
}

std::vector<char> encodeResidentReply(StringRef Error, const TensorShape &Shape) {
  return encode<SPSResidentReply>(Error, Shape.ElemSize, ArrayRef<int64_t>(Shape.Sizes));
}

} // namespace catalyst::remote::wire
