//===- Outputs.h - A launch's outputs, from --out to .npy files -*- C++ -*-===//
//
// Each output is declared by its dtype and rank (the shape comes back with
// it). The host buffers outputs land in are kept from one launch of a
// --repeat to the next, which receives into them again (LaunchCall::Into):
// fresh buffers would add page faults of the order of the transfer itself
// to every launch, which is not what --repeat measures.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_CLI_OUTPUTS_H
#define CATALYST_REMOTE_CLI_OUTPUTS_H

#include "Descriptor.h"
#include "Report.h"
#include "catalyst/remote/Launch.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace catalyst::remote::cli {

struct OutputSpec {
  DType Type;
  size_t Rank = 0;
};

// "float64:2", "f64:2".
llvm::Expected<OutputSpec> parseOutputSpec(llvm::StringRef Text);

class Outputs {
public:
  explicit Outputs(llvm::ArrayRef<OutputSpec> Specs);
  ~Outputs();
  Outputs(const Outputs &) = delete;
  Outputs &operator=(const Outputs &) = delete;

  // What the next launch fills in and receives into; valid until adopt().
  llvm::ArrayRef<MemrefArg> args() const { return Args; }
  llvm::ArrayRef<llvm::MutableArrayRef<char>> into() const { return Into; }

  // After a launch that succeeded: keeps the buffers its outputs are in.
  void adopt();

  // Bytes of the last launch's outputs (0 before any).
  uint64_t bytes() const;

  // Writes the last launch's outputs as Dir/out0.npy, out1.npy, ...
  llvm::Expected<std::vector<OutputFile>> write(llvm::StringRef Dir) const;

private:
  std::vector<OutputSpec> Specs;
  std::vector<Descriptor> Descs;
  std::vector<MemrefArg> Args;
  std::vector<llvm::MutableArrayRef<char>> Into; // owned: malloc'd, freed here
};

} // namespace catalyst::remote::cli

#endif
