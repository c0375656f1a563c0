//===- ReorderedInput.cpp - An input arriving in source order -------------===//

#include "ReorderedInput.h"

#include "llvm/Support/Error.h"

#include <algorithm>

using namespace llvm;

namespace catalyst::remote::executor {

void ReorderedInput::start(const wire::SourceOrder &O, char *To) {
  Order = &O;
  Dest = To;
  Next = 0;
}

// At most MaxRowBytes (SourceOrder::chunkRows); empty when that much
// cannot be had, which the transport takes as a refusal.
MutableArrayRef<char> ReorderedInput::buffer() {
  if (!Order)
    return {};
  size_t Want = size_t(std::min(Order->chunkRows(), Order->rows() - Next)) * Order->rowBytes();
  if (ChunkBytes < Want) {
    Chunk.reset(static_cast<char *>(std::aligned_alloc(64, (Want + 63) / 64 * 64)));
    ChunkBytes = Chunk ? Want : 0;
  }
  return {Chunk.get(), std::min(Want, ChunkBytes)};
}

Error ReorderedInput::take(size_t Bytes) {
  if (!Order)
    return createStringError(inconvertibleErrorCode(), "no input in source order was started");
  uint64_t Rows = Bytes / Order->rowBytes();
  if (Bytes % Order->rowBytes() || Next + int64_t(Rows) > Order->rows())
    return createStringError(inconvertibleErrorCode(),
                             "an input in source order came in a chunk of %zu bytes, not whole "
                             "rows of %llu bytes",
                             Bytes, (unsigned long long)Order->rowBytes());
  Order->unpack(Next, int64_t(Rows), Chunk.get(), Dest);
  Next += int64_t(Rows);
  return Error::success();
}

} // namespace catalyst::remote::executor
