//===- Memrefs.cpp - NumPy arrays as memref descriptors -------------------===//

#include "Memrefs.h"

#include "Errors.h"
#include "catalyst/remote/RemoteBindings.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace catalyst::remote::python {

namespace {

std::string ordinal(const char *What, size_t Index) {
  return std::string(What) + " " + std::to_string(Index);
}

[[noreturn]] void badInput(size_t Index, const std::string &Why) {
  raise(CATALYST_REMOTE_BAD_ARGUMENT, ordinal("input", Index) + " " + Why);
}

bool littleEndian() {
  const uint16_t One = 1;
  unsigned char First;
  std::memcpy(&First, &One, 1);
  return First == 1;
}

size_t wordsFor(size_t Rank) {
  return 3 + 2 * Rank;
}

// NumPy's flag for a dtype that holds Python objects (NPY_ITEM_HASOBJECT).
constexpr char HasObject = 0x01;

// Types whose elements are plain bytes a kernel can read: numbers, bools,
// and fixed-size records of them (no Python objects, no byte order that
// is not this machine's). Read from the dtype's own fields, not through
// its Python attributes: this runs for every input of every launch.
void checkElementType(const py::dtype &T, size_t Index, const char *What) {
  if (T.kind() == 'O' || (T.flags() & HasObject))
    throw py::type_error(ordinal(What, Index) + " holds Python objects (dtype " +
                         std::string(py::str(py::handle(T))) + "), which have no memref layout");
  char Order = T.byteorder();
  if ((Order == '>' && littleEndian()) || (Order == '<' && !littleEndian()))
    raise(CATALYST_REMOTE_BAD_ARGUMENT,
          ordinal(What, Index) + " has byte order '" + std::string(1, Order) +
              "', not this machine's (convert it with .astype(its dtype's "
              ".newbyteorder('=')))");
  if (T.itemsize() <= 0)
    raise(CATALYST_REMOTE_BAD_ARGUMENT, ordinal(What, Index) + " has elements of size 0 (dtype " +
                                            std::string(py::str(py::handle(T))) + ")");
}

// The package's RemoteArray class (setResidentType); lives as long as the
// process, which imports the package once.
PyObject *ResidentType = nullptr;

// Frees an output's buffer when the last array over it dies.
void freeBuffer(PyObject *Capsule) {
  std::free(PyCapsule_GetPointer(Capsule, nullptr));
}

} // namespace

OutputKind parseOutputKind(py::handle Spec, size_t Index) {
  py::tuple Pair;
  if (!py::isinstance<py::tuple>(Spec) || (Pair = Spec.cast<py::tuple>()).size() != 2)
    throw py::type_error(ordinal("output", Index) + " must be a (dtype, rank) pair, not " +
                         std::string(py::repr(Spec)));
  OutputKind K;
  try {
    K.Type = py::dtype::from_args(Pair[0]);
  } catch (py::error_already_set &E) {
    throw py::type_error(ordinal("output", Index) + ": " + std::string(py::repr(Pair[0])) +
                         " is not a NumPy dtype (" + E.what() + ")");
  }
  checkElementType(K.Type, Index, "output");
  if (!py::isinstance<py::int_>(Pair[1]) || Pair[1].cast<long long>() < 0 ||
      Pair[1].cast<long long>() > static_cast<long long>(MaxRank))
    raise(CATALYST_REMOTE_BAD_ARGUMENT,
          ordinal("output", Index) + ": rank " + std::string(py::repr(Pair[1])) +
              " is not a whole number from 0 to " + std::to_string(MaxRank));
  K.Rank = Pair[1].cast<size_t>();
  return K;
}

void setResidentType(py::handle Type) {
  Py_XDECREF(ResidentType);
  ResidentType = Type.inc_ref().ptr();
}

Descriptors::Round::Round() {
  thread_local Descriptors Mine;
  if (Mine.InUse) {
    Own = std::make_unique<Descriptors>();
    D = Own.get();
  } else {
    D = &Mine;
  }
  D->InUse = true;
}

Descriptors::Round::~Round() {
  D->clear();
  D->InUse = false;
}

Descriptors::~Descriptors() {
  clear();
}

void Descriptors::clear() {
  if (!Taken)
    freeOutputs();
  Taken = false;
  Words.clear();
  InputOffsets.clear();
  OutputOffsets.clear();
  InputPtrs.clear();
  OutputPtrs.clear();
  InputRanks.clear();
  InputSizes.clear();
  OutputRanks.clear();
  OutputSizes.clear();
  OutputKinds.clear();
  InputResidents.clear();
  Kept.clear();
}

void Descriptors::addInput(py::handle Object, size_t Index) {
  if (ResidentType && Py_TYPE(Object.ptr()) == reinterpret_cast<PyTypeObject *>(ResidentType)) {
    // Its shape is the executor's to check; the descriptor is not read.
    auto Handle = Object.attr("_handle").cast<int64_t>();
    if (Handle == 0)
      badInput(Index, "is a RemoteArray that was released");
    size_t Rank = Object.attr("ndim").cast<size_t>();
    if (Rank > MaxRank)
      badInput(Index, "is a resident of rank " + std::to_string(Rank));
    size_t At = Words.size();
    Words.resize(At + wordsFor(Rank));
    InputOffsets.push_back(At);
    InputRanks.push_back(Rank);
    InputSizes.push_back(Object.attr("itemsize").cast<size_t>());
    InputResidents.resize(InputRanks.size() - 1, 0);
    InputResidents.push_back(Handle);
    return;
  }
  if (!py::isinstance<py::array>(Object))
    throw py::type_error(ordinal("input", Index) + " is a " +
                         std::string(py::str(Object.get_type().attr("__name__"))) +
                         ", not a NumPy array (pass numpy.asarray(...) of it)");
  auto Array = py::reinterpret_borrow<py::array>(Object);
  py::dtype T = Array.dtype();
  checkElementType(T, Index, "input");
  size_t Rank = static_cast<size_t>(Array.ndim());
  if (Rank > MaxRank)
    badInput(Index, "has rank " + std::to_string(Rank) + ", more than a memref's " +
                        std::to_string(MaxRank));
  auto Elem = static_cast<ssize_t>(T.itemsize());
  auto Data = reinterpret_cast<uintptr_t>(Array.data());
  if (Array.size() > 0 && Data % std::min<uintptr_t>(Elem, alignof(std::max_align_t)) != 0)
    badInput(Index, "is not aligned to its elements (pass numpy.ascontiguousarray(...) of it)");
  size_t At = Words.size();
  Words.resize(At + wordsFor(Rank));
  int64_t *W = Words.data() + At;
  W[0] = W[1] = static_cast<int64_t>(Data);
  W[2] = 0;
  for (size_t D = 0; D < Rank; ++D) {
    ssize_t Stride = Array.strides(D);
    if (Stride % Elem != 0)
      badInput(Index, "has a stride of " + std::to_string(Stride) + " bytes in dimension " +
                          std::to_string(D) + ", not a whole number of its " +
                          std::to_string(Elem) +
                          "-byte elements (pass numpy.ascontiguousarray(...) of it)");
    W[3 + D] = Array.shape(D);
    W[3 + Rank + D] = Stride / Elem;
  }
  InputOffsets.push_back(At);
  InputRanks.push_back(Rank);
  InputSizes.push_back(static_cast<size_t>(Elem));
  if (!InputResidents.empty())
    InputResidents.push_back(0);
}

void Descriptors::addOutput(const OutputKind &Kind) {
  size_t At = Words.size();
  Words.resize(At + wordsFor(Kind.Rank));
  OutputOffsets.push_back(At);
  OutputRanks.push_back(Kind.Rank);
  OutputSizes.push_back(static_cast<size_t>(Kind.Type.itemsize()));
  OutputKinds.push_back(&Kind);
}

void Descriptors::keepLast() {
  Kept.resize(OutputRanks.size(), 0);
  Kept.back() = 1;
}

void Descriptors::seal() {
  if (!Kept.empty()) // outputs added after the last kept one
    Kept.resize(OutputRanks.size(), 0);
  InputPtrs.clear();
  OutputPtrs.clear();
  for (size_t At : InputOffsets)
    InputPtrs.push_back(Words.data() + At);
  for (size_t At : OutputOffsets)
    OutputPtrs.push_back(Words.data() + At);
}

void Descriptors::freeOutputs() {
  for (size_t At : OutputOffsets) {
    std::free(reinterpret_cast<void *>(Words[At]));
    Words[At] = 0;
  }
}

// Output I's descriptor as an array over its buffer, which Owner frees.
// Through NumPy's C API with the shape on the stack: py::array's
// constructor would copy shape and strides into vectors.
py::array Descriptors::outputArray(size_t I, py::handle Owner) {
  const int64_t *W = Words.data() + OutputOffsets[I];
  size_t Rank = OutputRanks[I];
  auto Elem = static_cast<Py_intptr_t>(OutputSizes[I]);
  Py_intptr_t Shape[MaxRank], Strides[MaxRank];
  for (size_t D = 0; D < Rank; ++D) {
    if (W[3 + D] < 0)
      raise(CATALYST_REMOTE_OTHER, ordinal("output", I) + " came back with size " +
                                       std::to_string(W[3 + D]) + " in dimension " +
                                       std::to_string(D));
    Shape[D] = W[3 + D];
    Strides[D] = W[3 + Rank + D] * Elem;
  }
  auto *Base = reinterpret_cast<char *>(W[1]) + W[2] * Elem;
  auto &Api = py::detail::npy_api::get();
  // NewFromDescr steals the reference to the dtype; SetBaseObject the one
  // to the owner.
  auto Array = py::reinterpret_steal<py::array>(Api.PyArray_NewFromDescr_(
      Api.PyArray_Type_, OutputKinds[I]->Type.inc_ref().ptr(), static_cast<int>(Rank), Shape,
      Strides, Base, py::detail::npy_api::NPY_ARRAY_WRITEABLE_, nullptr));
  if (!Array)
    throw py::error_already_set();
  if (Owner && Api.PyArray_SetBaseObject_(Array.ptr(), Owner.inc_ref().ptr()) != 0)
    throw py::error_already_set();
  return Array;
}

py::tuple Descriptors::takeOutputs() {
  // Each buffer goes to its capsule as its array is made, so that whatever
  // fails frees every buffer once: those handed over through their
  // capsules, the others through clear().
  py::tuple Out(OutputOffsets.size());
  for (size_t I = 0; I < OutputOffsets.size(); ++I) {
    size_t At = OutputOffsets[I];
    if (!Kept.empty() && Kept[I]) {
      // In the executor: its handle and shape (its descriptor's sizes).
      const int64_t *W = Words.data() + At;
      py::tuple Shape(OutputRanks[I]);
      for (size_t D = 0; D < OutputRanks[I]; ++D)
        Shape[D] = py::int_(W[3 + D]);
      Out[I] = py::make_tuple(Kept[I], Shape);
      continue;
    }
    void *Allocated = reinterpret_cast<void *>(Words[At]);
    // A capsule cannot hold null: an output with no buffer has no owner.
    py::object Owner;
    if (Allocated) {
      Owner = py::reinterpret_steal<py::object>(PyCapsule_New(Allocated, nullptr, freeBuffer));
      if (!Owner)
        throw py::error_already_set();
    }
    Words[At] = 0;
    Out[I] = outputArray(I, Owner);
  }
  Taken = true;
  return Out;
}

} // namespace catalyst::remote::python
