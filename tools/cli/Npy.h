//===- Npy.h - NumPy .npy files in and out ----------------------*- C++ -*-===//
//
// Reads versions 1.0, 2.0 and 3.0 (which differ in the header's length
// field and text encoding) of little-endian numeric data in C or Fortran
// order; writes version 1.0 in C order, as NumPy does for any array whose
// header fits. A file is checked before it is trusted: its magic, version
// and header length, the header's grammar, the shape's byte count against
// overflow and against the file's size. Errors name the file and say what
// is wrong with it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_NPY_H
#define CATALYST_REMOTE_CLI_NPY_H

#include "DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace catalyst::remote::cli {

// 64-byte aligned memory, as MLIR allocates it; never null, even empty.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  // Null on failure.
  static AlignedBuffer allocate(uint64_t Bytes);
  char *data() const { return Data.get(); }
  uint64_t size() const { return Bytes; }
  explicit operator bool() const { return Data != nullptr; }

private:
  struct Free {
    void operator()(char *P) const { std::free(P); }
  };
  std::unique_ptr<char, Free> Data;
  uint64_t Bytes = 0;
};

struct NpyArray {
  DType Type;
  std::vector<int64_t> Shape;
  bool FortranOrder = false;
  AlignedBuffer Data; // the values as the file lays them out
};

llvm::Expected<NpyArray> readNpy(llvm::StringRef Path);

// Writes Data, the dense C-order values of an array of Shape, to Path: to
// a file beside it first, renamed into place once complete, so that Path
// never holds half an array.
llvm::Error writeNpy(llvm::StringRef Path, const DType &Type, llvm::ArrayRef<int64_t> Shape,
                     const char *Data);

// Bytes of Shape's values, or an error when they, or the strides over its
// non-empty dimensions, overflow 63 bits.
llvm::Expected<uint64_t> byteCount(const DType &Type, llvm::ArrayRef<int64_t> Shape);

} // namespace catalyst::remote::cli

#endif
