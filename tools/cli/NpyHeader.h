//===- NpyHeader.h - The dictionary at the start of an .npy file -*- C++ -*-===//
//
// An .npy header is a Python dictionary literal,
//   {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by a newline. The parser takes exactly that
// grammar (strings in either quote, True/False, tuples of integers, with
// Python 2's 3L too) and nothing more: the text comes from a file, which may
// be anything.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_NPYHEADER_H
#define CATALYST_REMOTE_CLI_NPYHEADER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace catalyst::remote::cli {

// NumPy's own limit on dimensions, and the most a shape here may have.
inline constexpr size_t MaxNpyRank = 64;

struct NpyHeader {
  std::string Descr;
  bool FortranOrder = false;
  std::vector<int64_t> Shape;
};

// The dictionary in Text (padding and newline included); the error says
// what is wrong with it and where.
llvm::Expected<NpyHeader> parseNpyHeader(llvm::StringRef Text);

// The dictionary for H, unpadded.
std::string formatNpyHeader(const NpyHeader &H);

} // namespace catalyst::remote::cli

#endif
