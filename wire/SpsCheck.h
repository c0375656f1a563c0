//===- SpsCheck.h - Walking SPS bytes from a peer before decoding -*- C++ -*-===//
//
// LLVM's SPS decoder reserves a sequence's storage from the count it reads,
// before it has seen the elements: a peer announcing 2^60 elements in a few
// bytes makes it throw (bad_alloc, length_error) and ends the process. So
// every decode of peer bytes is preceded by this walk, which allocates
// nothing and accepts the bytes only when every count is covered by the bytes
// that remain (each element takes at least the smallest encoding of its tag)
// and every bool is 0 or 1.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SPSCHECK_H
#define CATALYST_REMOTE_WIRE_SPSCHECK_H

#include "llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h"
#include "llvm/ExecutionEngine/Orc/Shared/SimplePackedSerialization.h"
#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"
#include "llvm/Support/Endian.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace catalyst::remote::wire {

namespace sps = llvm::orc::shared;

// Unread bytes of an encoding.
struct SpsCursor {
  const char *P;
  size_t Left;

  bool take(size_t N) {
    if (N > Left)
      return false;
    P += N;
    Left -= N;
    return true;
  }
};

// SpsWalk<Tag>::Min is the smallest encoding of Tag; walk() steps over one
// value, false when the bytes cannot be one. Only the tags this project
// decodes have a walker: any other fails to compile.
template <typename Tag, typename = void> struct SpsWalk;

template <typename Tag> struct SpsWalk<Tag, std::enable_if_t<std::is_arithmetic_v<Tag>>> {
  static constexpr size_t Min = sizeof(Tag);
  static bool walk(SpsCursor &C) { return C.take(sizeof(Tag)); }
};

// LLVM decodes a bool by copying its byte: any value but 0 and 1 would be
// an invalid bool (undefined behaviour) in the decoded value.
template <> struct SpsWalk<bool> {
  static constexpr size_t Min = 1;
  static bool walk(SpsCursor &C) { return C.Left >= 1 && uint8_t(*C.P) <= 1 && C.take(1); }
};

template <> struct SpsWalk<sps::SPSEmpty> {
  static constexpr size_t Min = 0;
  static bool walk(SpsCursor &) { return true; }
};

template <> struct SpsWalk<sps::SPSExecutorAddr> : SpsWalk<uint64_t> {};

template <typename... Tags> struct SpsWalkAll {
  static constexpr size_t Min = (size_t(0) + ... + SpsWalk<Tags>::Min);
  static bool walk(SpsCursor &C) { return (... && SpsWalk<Tags>::walk(C)); }
};

template <typename... Tags> struct SpsWalk<sps::SPSTuple<Tags...>> : SpsWalkAll<Tags...> {};
template <typename... Tags> struct SpsWalk<sps::SPSArgList<Tags...>> : SpsWalkAll<Tags...> {};

template <typename Elem> struct SpsWalk<sps::SPSSequence<Elem>> {
  static constexpr size_t Min = sizeof(uint64_t);
  static bool walk(SpsCursor &C) {
    if (C.Left < sizeof(uint64_t))
      return false;
    uint64_t Count = llvm::support::endian::read64le(C.P);
    C.take(sizeof(uint64_t));
    // Elements of an empty encoding still cost the decoder storage: allow
    // no more of them than there are bytes.
    constexpr size_t Each = SpsWalk<Elem>::Min ? SpsWalk<Elem>::Min : 1;
    if (Count > C.Left / Each)
      return false;
    if constexpr (std::is_arithmetic_v<Elem> && !std::is_same_v<Elem, bool>)
      return C.take(Count * sizeof(Elem));
    for (uint64_t I = 0; I < Count; ++I)
      if (!SpsWalk<Elem>::walk(C))
        return false;
    return true;
  }
};

// A flag, then the value (Expected) or the error's message.
template <typename T> struct SpsWalk<sps::SPSExpected<T>> {
  static constexpr size_t Min = 1;
  static bool walk(SpsCursor &C) {
    bool HasValue = C.Left >= 1 && *C.P == 1;
    if (!SpsWalk<bool>::walk(C))
      return false;
    return HasValue ? SpsWalk<T>::walk(C) : SpsWalk<sps::SPSString>::walk(C);
  }
};

template <> struct SpsWalk<sps::SPSError> {
  static constexpr size_t Min = 1;
  static bool walk(SpsCursor &C) {
    bool HasError = C.Left >= 1 && *C.P == 1;
    if (!SpsWalk<bool>::walk(C))
      return false;
    return !HasError || SpsWalk<sps::SPSString>::walk(C);
  }
};

// True when Bytes are exactly one encoding of Tag (an SPSArgList for a
// wrapper function's arguments or result), every count within them.
template <typename Tag> bool spsWellFormed(const char *Bytes, size_t Size) {
  SpsCursor C{Bytes, Size};
  return SpsWalk<Tag>::walk(C) && C.Left == 0;
}

// The tags of a wrapper function's arguments and result.
template <typename Sig> struct SpsSignature;
template <typename Ret, typename... Args> struct SpsSignature<Ret(Args...)> {
  using ArgList = sps::SPSArgList<Args...>;
  using ResultTag = std::conditional_t<std::is_void_v<Ret>, sps::SPSEmpty, Ret>;
  using Result = sps::SPSArgList<ResultTag>;
};

template <typename Tag> struct SpsCarriesError : std::false_type {};
template <> struct SpsCarriesError<sps::SPSError> : std::true_type {};
template <typename T> struct SpsCarriesError<sps::SPSExpected<T>> : std::true_type {};

// WrapperFunction<SPSSig>::handle for bytes from a peer: arguments that do
// not walk never reach the decoder. The caller hears why in the result when
// its type carries an error (the stock EPC server turns an out-of-band error
// into an empty reply), else gets an out-of-band error.
template <typename SPSSig, typename HandlerT>
sps::WrapperFunctionBuffer handleChecked(const char *Data, size_t Size, HandlerT &&Handler) {
  if (spsWellFormed<typename SpsSignature<SPSSig>::ArgList>(Data, Size))
    return sps::WrapperFunction<SPSSig>::handle(Data, Size, std::forward<HandlerT>(Handler));
  constexpr const char *Why =
      "malformed request: its arguments do not decode as the service's signature";
  using Sig = SpsSignature<SPSSig>;
  if constexpr (SpsCarriesError<typename Sig::ResultTag>::value)
    return sps::detail::serializeViaSPSToWrapperFunctionBuffer<typename Sig::Result>(
        sps::detail::toSPSSerializable(
            llvm::createStringError(llvm::inconvertibleErrorCode(), Why)));
  else
    return sps::WrapperFunctionBuffer::createOutOfBandError(Why);
}

} // namespace catalyst::remote::wire

#endif
