//===- LaunchCase.h - The memrefs one launch benchmark moves ----*- C++ -*-===//
//
// A case splits one direction's payload into the memrefs a launch carries:
// N dense rank-1 byte slices of one buffer (views into it, at offsets), or
// one transposed rank-3 view of f64 elements: numpy's x.T of a dense
// [D0][D1][D2] array, whose innermost index has the largest stride, so
// every element is a run of its own for whoever packs it. The forward
// kernel hands each input back as its output (kernels/forward.c), so the
// launch is all transfer.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_LAUNCHCASE_H
#define CATALYST_REMOTE_BENCH_LAUNCHCASE_H

#include "catalyst/remote/Session.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace catalyst::remote::bench {

struct CaseShape {
  uint64_t Bytes = 0; // per direction, all inputs together
  unsigned Inputs = 1;
  bool Strided = false; // one transposed rank-3 input; else rank-1 slices
  // Outputs received into buffers the case keeps from launch to launch
  // (LaunchCall::Into), as a caller repeating a launch would; else into
  // fresh ones, freed after each launch.
  bool Into = false;

  unsigned rank() const { return Strided ? 3 : 1; }
  // f64 for the rank-3 view, as a Catalyst tensor would be; bytes for the
  // slices, so any split of the payload is possible.
  size_t elemSize() const { return Strided ? 8 : 1; }
};

// forward.c's entry for Shape, e.g. "forward_16_r1".
std::string forwardEntry(const CaseShape &Shape);

class LaunchCase {
public:
  // Bytes must be a multiple of Inputs, and for the strided view a power of
  // two of at least 8.
  explicit LaunchCase(const CaseShape &Shape);
  LaunchCase(const LaunchCase &) = delete;
  LaunchCase &operator=(const LaunchCase &) = delete;

  const CaseShape &shape() const { return Shape; }
  // Every input byte, in one dense buffer: what a raw stream of the same
  // payload sends.
  const char *payload() const { return Base.data(); }

  // The call to make, its output descriptors zeroed. It points into this
  // case and stays valid as long as it does.
  LaunchCall call();
  // After a launch succeeded: checks each output against its input (every
  // element when Everything, else both ends and the middle) and frees them.
  llvm::Error finish(bool Everything);
  // Seconds one launch through S took; checking and freeing are not timed.
  llvm::Expected<double> run(Session &S, bool Everything);

private:
  int64_t *inDesc(size_t I) { return &InWords[I * Words]; }
  int64_t *outDesc(size_t I) { return &OutWords[I * Words]; }
  void buildSlices();
  void buildTransposed();
  // Output I landed in the buffer lent for it (Into): the case's, not freed.
  bool receivedIntoLent(size_t I);
  void freeOutputs();

  CaseShape Shape;
  std::string Entry;
  size_t Words; // int64 words per descriptor
  std::vector<char> Base;
  std::vector<int64_t> InWords, OutWords;
  std::vector<MemrefArg> InArgs, OutArgs;
  std::vector<std::vector<char>> Lent; // Into: one buffer per output
  std::vector<llvm::MutableArrayRef<char>> LentRefs;
};

} // namespace catalyst::remote::bench

#endif
