//===- OutputRepliesFuzz.h - Naive and batched replies, fuzzed --*- C++ -*-===//
//
// Both strategies read their outputs the same way once they hold the
// descriptor area: check it, ask for the spans, check the buffers read,
// unpack. This drives those steps with buffers read from the fuzz input
// (a count, then each buffer's length and bytes), so counts and sizes can be
// anything; accepted outputs are unpacked into buffers of exactly their
// size, from buffers of exactly their span, so ASan sees any stray byte.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_FUZZ_OUTPUTREPLIESFUZZ_H
#define CATALYST_REMOTE_FUZZ_OUTPUTREPLIESFUZZ_H

#include "FuzzInput.h"
#include "transfer/OutputReplies.h"

#include <memory>

namespace catalyst::remote::fuzz {

// Buffers "read" for Spans, from the input: usually as many as asked for,
// each usually as long as its span, but either may differ.
inline std::vector<std::vector<uint8_t>>
takeRead(FuzzInput &In, llvm::ArrayRef<llvm::orc::ExecutorAddrRange> Spans) {
  uint8_t Shape = In.take<uint8_t>();
  size_t Count = Shape & 1 ? In.take<uint8_t>() % 6 : Spans.size();
  std::vector<std::vector<uint8_t>> Read(Count);
  for (size_t I = 0; I < Count; ++I) {
    uint64_t Want = I < Spans.size() ? Spans[I].size() : 0;
    uint64_t Len = Shape & 2 ? In.take<uint16_t>() : std::min<uint64_t>(Want, MaxPackedBytes);
    llvm::ArrayRef<char> B = In.bytes(Len);
    Read[I].assign(B.begin(), B.end());
    Read[I].resize(Len);
  }
  return Read;
}

// Unpacks O from Span into a buffer of exactly its size.
inline void unpackExactly(const ReturnedOutput &O, size_t I, const std::vector<uint8_t> &Span) {
  if (O.Layout.Bytes > MaxPackedBytes)
    return;
  std::unique_ptr<uint8_t[]> Exact(new uint8_t[Span.size()]);
  std::copy(Span.begin(), Span.end(), Exact.get());
  std::unique_ptr<char[]> Dst(new char[O.Layout.Bytes]);
  if (auto Err =
          unpackOutput(O, I, {Exact.get(), Span.size()}, {Dst.get(), size_t(O.Layout.Bytes)}))
    llvm::consumeError(std::move(Err)); // refusing is a fine answer
}

} // namespace catalyst::remote::fuzz

#endif
