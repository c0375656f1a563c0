//===- DType.h - Element types as NumPy names them --------------*- C++ -*-===//
//
// The element types a memref carries through the C ABI: bool, signed and
// unsigned integers of 8 to 64 bits, float16/32/64, complex64/128. Each has
// NumPy's name ("float64"), a short one ("f64": bits, where NumPy's own
// code "<f8" counts bytes) and the .npy header's little-endian code.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_DTYPE_H
#define CATALYST_REMOTE_CLI_DTYPE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <string>

namespace catalyst::remote::cli {

struct DType {
  const char *Name;  // NumPy's: "float64"
  const char *Short; // "f64"
  char Code;         // NumPy's kind: 'b', 'i', 'u', 'f', 'c'
  size_t Bytes;

  // NumPy's type string for a little-endian file: "<f8", "|u1".
  std::string descr() const;
  bool operator==(const DType &O) const { return Code == O.Code && Bytes == O.Bytes; }
};

// NumPy's name or the short one, as a user types it.
llvm::Expected<DType> dtypeNamed(llvm::StringRef Name);

// An .npy header's type string; the error says what the type is and why it
// cannot be carried (big-endian, Python objects, structured, text...).
llvm::Expected<DType> dtypeOfDescr(llvm::StringRef Descr);

// "bool, int8, ..., complex128" for help texts.
std::string dtypeNames();

} // namespace catalyst::remote::cli

#endif
