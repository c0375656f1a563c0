//===- SourceOrder.h - A transposed input sent in its own order -*- C++ -*-===//
//
// A transposed view of a dense array (every stride positive, the strides a
// permutation of the array's own) can travel as the array's bytes in the
// order memory holds them: the sender then sends them straight from the
// caller's buffer, which over TCP costs no more than a dense input, and the
// receiver, whose processor waits on the socket anyway, transposes each
// chunk of the array's outermost rows into the dense input as it lands.
// The receiver checks the layout: it comes from a peer.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_WIRE_SOURCEORDER_H
#define CATALYST_REMOTE_WIRE_SOURCEORDER_H

#include "MemrefLayout.h"
#include "copy/BoxCopy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace catalyst::remote::wire {

class SourceOrder {
public:
  // Rows of the array larger than this are refused: a receiver holds a
  // chunk of whole rows.
  static constexpr uint64_t MaxRowBytes = 16 << 20;

  // Checks that Sizes and Strides (elements) lay the view out as a
  // permutation of a dense array that starts at element 0: non-empty, and
  // its dimensions sorted by stride dense, each row at most MaxRowBytes.
  static llvm::Expected<SourceOrder> of(llvm::ArrayRef<int64_t> Sizes,
                                        llvm::ArrayRef<int64_t> Strides, size_t ElemSize,
                                        MemrefName Name);

  // What a sender sends in source order: a view that is transposed (the
  // packer would tile it) and a permutation of its span; else nothing.
  static std::optional<SourceOrder> worthSending(const MemrefDesc &D, size_t ElemSize,
                                                 const MemrefLayout &L);

  int64_t rows() const { return Rows; }
  uint64_t rowBytes() const { return RowBytes; }
  uint64_t bytes() const { return uint64_t(Rows) * RowBytes; }
  // Rows a receiver takes at a time: about a megabyte, whole cache lines of
  // the destination when the rows are its columns; at most MaxRowBytes.
  int64_t chunkRows() const;

  // Writes rows First..First+Count of the array, which Src holds densely,
  // to where the dense view at Dst has them.
  void unpack(int64_t First, int64_t Count, const char *Src, char *Dst) const;

private:
  SourceOrder() = default;

  copy::Box View;   // the whole view, its size-1 dimensions dropped
  size_t Outer = 0; // the dimension of View that is the array's rows
  size_t Col = 0;   // copy::columnOf(View)
  int64_t Rows = 0; // View.Size[Outer]
  uint64_t RowBytes = 0;
};

} // namespace catalyst::remote::wire

#endif
