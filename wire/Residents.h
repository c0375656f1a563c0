//===- Residents.h - Tensors kept in the executor, on the wire --*- C++ -*-===//
//
// A resident is a tensor the executor keeps for the session that sent it,
// named by an id the host chooses (unique in the session, never 0), so that
// later launches use it without its bytes crossing again. Three payload
// messages (Framing.h) from host to executor, each answered by one
// ResidentReply with the same sequence number:
//
//   Upload   plan: id, element size, sizes; payload: the tensor's values,
//            dense, in row-major order. The executor keeps them under id.
//   Fetch    plan: a sequence of exactly one id. The reply's payload is
//            the resident's values, dense; its plan gives its shape.
//   Release  plan: a sequence of ids. The executor frees them.
//
//   ResidentReply  plan: error (empty on success), element size, sizes
//                  (an Upload's or a Fetch's tensor; 0 and none for a
//                  Release); payload: a Fetch's values, nothing otherwise.
//
// A zero-copy launch (Launch or SharedLaunch) uses them through a longer
// plan, SPSResidentLaunchPlan: the zero-copy plan's four fields, then
//   resident inputs  {input index, id}: the input is the resident; its
//                    plan entry gives its shape, with no destination and
//                    no bytes (none of its values travel)
//   kept outputs     {output index, id}: the output stays in the executor
//                    as a new resident; the result lists its shape with 0
//                    bytes, and none of its values travel
// each by increasing index. A plan without either is the zero-copy plan.
//
// The executor advertises residents in its bootstrap map (ResidentsKey,
// whose value is ResidentsVersion); a host refuses to use them with an
// executor that does not. Both sides check everything they decode here:
// a malformed plan is an error, never a crash.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_RESIDENTS_H
#define CATALYST_REMOTE_WIRE_RESIDENTS_H

#include "wire/Protocol.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace catalyst::remote::wire {

inline constexpr const char *ResidentsKey = "catalyst_remote_residents";
inline constexpr uint32_t ResidentsVersion = 1;

using SPSUploadPlan = sps::SPSArgList<uint64_t, uint64_t, sps::SPSSequence<int64_t>>;
using SPSResidentIds = sps::SPSArgList<sps::SPSSequence<uint64_t>>;
using SPSResidentReply = sps::SPSArgList<sps::SPSString, uint64_t, sps::SPSSequence<int64_t>>;
using SPSResidentRef = sps::SPSTuple<uint64_t, uint64_t>;
using ResidentRef = std::tuple<uint64_t, uint64_t>; // index, id
using SPSResidentLaunchPlan =
    sps::SPSArgList<sps::SPSExecutorAddr, sps::SPSSequence<SPSZeroCopyInput>,
                    sps::SPSSequence<SPSLaunchOutputSpec>, sps::SPSSequence<SPSSourceOrdered>,
                    sps::SPSSequence<SPSResidentRef>, sps::SPSSequence<SPSResidentRef>>;

// The most ids one Release names.
inline constexpr size_t MaxReleasedAtOnce = 1 << 16;

// A tensor's element size and shape, and its bytes, dense.
struct TensorShape {
  uint64_t ElemSize = 0;
  Shape Sizes;
  uint64_t Bytes = 0;
};

// ElemSize and Sizes as a shape, or an error naming What ("the upload")
// when the element size is 0, the rank past MaxRank, a size negative or
// the bytes past 2^64.
llvm::Expected<TensorShape> tensorShape(uint64_t ElemSize, llvm::ArrayRef<int64_t> Sizes,
                                        const char *What);

struct UploadPlan {
  uint64_t Id = 0;
  TensorShape Shape;
};

// An Upload's plan, checked against the PayloadBytes that follow it.
llvm::Expected<UploadPlan> decodeUploadPlan(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes);
std::vector<char> encodeUploadPlan(uint64_t Id, uint64_t ElemSize, llvm::ArrayRef<int64_t> Sizes);

// A Fetch's or a Release's ids: nonzero, at most Most of them, at least one.
llvm::Expected<std::vector<uint64_t>> decodeResidentIds(llvm::ArrayRef<char> Plan, size_t Most);
std::vector<char> encodeResidentIds(llvm::ArrayRef<uint64_t> Ids);

struct ResidentReply {
  std::string Error; // empty: done
  TensorShape Shape; // a Fetch's resident's; an Upload's, as kept
};

// A ResidentReply's plan, checked against the PayloadBytes that follow it:
// a successful one's shape must be whole or none (element size 0, no
// sizes, no payload), and a payload must be its bytes.
llvm::Expected<ResidentReply> decodeResidentReply(llvm::ArrayRef<char> Plan, uint64_t PayloadBytes);
std::vector<char> encodeResidentReply(llvm::StringRef Error, const TensorShape &Shape);

} // namespace catalyst::remote::wire

#endif
