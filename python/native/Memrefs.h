//===- Memrefs.h - NumPy arrays as memref descriptors -----------*- C++ -*-===//
//
// A launch's inputs are NumPy arrays, described to the library in place:
// the descriptor points at the array's own memory, so nothing is copied
// before the transfer; or RemoteArrays, tensors the executor keeps
// (catalyst_remote/resident.py), named by their resident handles. Its
// outputs come back as descriptors of buffers the library malloc'ed, and
// leave as NumPy arrays that own those buffers (a capsule frees each once,
// when its last array dies); or, when kept in the executor, as the new
// residents' handles and shapes.
//
// Usage:
//   Descriptors::Round R;                // this thread's, emptied
//   Descriptors &D = R.get();
//   D.addInput(Array, Index);            // throws what names a bad input
//   D.addOutput(Kind);                   // Kind outlives the round
//   D.seal();
//   ... catalyst_remote_launch(..., D.inputs(), ..., D.outputs(), ...) ...
//   py::tuple Results = D.takeOutputs(); // else the round frees them
//
// A thread's rounds reuse one Descriptors, so that once its vectors have
// grown to a launch's size a launch allocates nothing here.
//
// Thread safety: a thread's own, built and read with the GIL held; the
// library reads and writes it with the GIL released, while the arrays it
// points into are kept alive by the caller.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_MEMREFS_H
#define CATALYST_REMOTE_PYTHON_MEMREFS_H

#include <cstddef>
#include <cstdint>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <vector>

namespace catalyst::remote::python {

namespace py = pybind11;

// The most dimensions an array here may have: NumPy's (NPY_MAXDIMS, 32),
// below the wire's 64 (wire/MemrefLayout.h).
inline constexpr size_t MaxRank = 32;

// What one output is: its element type and rank. Parsed once (a prepared
// launch keeps them) since building a dtype costs more than a tiny launch's
// bookkeeping.
struct OutputKind {
  py::dtype Type;
  size_t Rank = 0;
};

// Parses ("float64", 2), (np.float64, 2) or (np.dtype(...), 2); throws
// TypeError (not such a pair) or BadArgument naming output Index and what
// is wrong.
OutputKind parseOutputKind(py::handle Spec, size_t Index);

// The package's RemoteArray class, set once at import: an input of that
// type is a resident, named by its `_handle` and described by its `ndim`
// and `itemsize`.
void setResidentType(py::handle Type);

class Descriptors {
public:
  // One launch's use of this thread's Descriptors (or of its own, when a
  // round of this thread's is already open); frees what it leaves.
  class Round {
  public:
    Round();
    ~Round();
    Round(const Round &) = delete;
    Round &operator=(const Round &) = delete;
    Descriptors &get() { return *D; }

  private:
    std::unique_ptr<Descriptors> Own;
    Descriptors *D;
  };

  Descriptors() = default;
  ~Descriptors();
  Descriptors(const Descriptors &) = delete;
  Descriptors &operator=(const Descriptors &) = delete;

  // Throws TypeError or BadArgument naming input Index when Array cannot be
  // a memref as it is (not an ndarray, byte-swapped, unaligned, an object
  // dtype, strides that are not a whole number of elements).
  void addInput(py::handle Array, size_t Index);
  void addOutput(const OutputKind &Kind); // Kind must outlive the round
  // The output added last stays in the executor as a resident.
  void keepLast();
  // Points the arrays below at the descriptors, once all are added.
  void seal();

  size_t numInputs() const { return InputRanks.size(); }
  size_t numOutputs() const { return OutputRanks.size(); }
  void *const *inputs() { return InputPtrs.data(); }
  const size_t *inputRanks() const { return InputRanks.data(); }
  const size_t *inputElemSizes() const { return InputSizes.data(); }
  void *const *outputs() { return OutputPtrs.data(); }
  const size_t *outputRanks() const { return OutputRanks.data(); }
  const size_t *outputElemSizes() const { return OutputSizes.data(); }
  // One resident handle per input (0: an array), or null when none is.
  const int64_t *inputResidents() const {
    return InputResidents.empty() ? nullptr : InputResidents.data();
  }
  // One entry per output, not 0 for those kept, or null when none is; the
  // launch writes the kept ones' handles there.
  int64_t *keptOutputs() { return Kept.empty() ? nullptr : Kept.data(); }

  // The outputs a successful launch wrote, as arrays owning their buffers,
  // a kept one as its (resident handle, shape). Throws RuntimeError for a
  // descriptor that is not what was asked for (its buffers are freed).
  py::tuple takeOutputs();

private:
  // Frees outputs not taken, and empties every vector (keeping capacity).
  void clear();
  void freeOutputs();
  py::array outputArray(size_t I, py::handle Owner);

  // Every descriptor's int64 words, inputs' then outputs', each
  // {allocated, aligned, offset, sizes[rank], strides[rank]}; seal()
  // takes pointers into it once it stops growing.
  std::vector<int64_t> Words;
  std::vector<size_t> InputOffsets, OutputOffsets;
  std::vector<void *> InputPtrs, OutputPtrs;
  std::vector<size_t> InputRanks, InputSizes, OutputRanks, OutputSizes;
  std::vector<const OutputKind *> OutputKinds;
  // Empty until an input is a resident (an output is kept); then one per
  // input (output).
  std::vector<int64_t> InputResidents, Kept;
  bool Taken = false;
  bool InUse = false; // a round is open on it
};

} // namespace catalyst::remote::python

#endif
