//===- LaunchCache.cpp - Session.launch's prepared launches ---------------===//

#include "LaunchCache.h"

#include "Errors.h"
#include "NativeType.h"
#include "PreparedLaunch.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace catalyst::remote::python {

namespace {

// As many as Session.launch kept before (a dict it emptied at 64).
constexpr size_t MaxLaunches = 64;

struct Kept {
  py::object Entry, Object;      // exact strs, or None for Object
  std::vector<py::object> Kinds; // exact tuples, as the caller passed them
  py::object Prepared;
};

struct Launches {
  std::shared_ptr<Target> On;
  std::vector<Kept> All; // oldest first
};

struct CacheObject {
  PyObject ob_base; // PyObject_HEAD
  vectorcallfunc Call;
  Launches *Cache; // owned
};

PyTypeObject *CacheType = nullptr;

bool isStr(PyObject *O) {
  return PyUnicode_CheckExact(O);
}

// Whether two items of output kinds are the same for a launch: the same
// object, or equal exact strs or ints. Never runs Python code.
bool sameItem(PyObject *A, PyObject *B) {
  if (A == B)
    return true;
  if (isStr(A) && isStr(B))
    return PyUnicode_Compare(A, B) == 0;
  if (PyLong_CheckExact(A) && PyLong_CheckExact(B))
    return PyObject_RichCompareBool(A, B, Py_EQ) == 1;
  return false;
}

bool sameKind(PyObject *Given, PyObject *Kept) {
  if (Given == Kept)
    return true;
  if (!PyTuple_CheckExact(Given) || PyTuple_GET_SIZE(Given) != 2)
    return false;
  return sameItem(PyTuple_GET_ITEM(Given, 0), PyTuple_GET_ITEM(Kept, 0)) &&
         sameItem(PyTuple_GET_ITEM(Given, 1), PyTuple_GET_ITEM(Kept, 1));
}

bool sameObject(PyObject *Given, PyObject *Kept) {
  if (Given == Kept)
    return true;
  return Given != Py_None && Kept != Py_None && PyUnicode_Compare(Given, Kept) == 0;
}

// Whether Kind is an exact (dtype, rank) tuple of items that cannot
// change: a str, a type or a dtype, and an exact int.
bool keepableKind(PyObject *Kind) {
  if (!PyTuple_CheckExact(Kind) || PyTuple_GET_SIZE(Kind) != 2)
    return false;
  PyObject *Type = PyTuple_GET_ITEM(Kind, 0);
  return (isStr(Type) || PyType_Check(Type) || py::isinstance<py::dtype>(Type)) &&
         PyLong_CheckExact(PyTuple_GET_ITEM(Kind, 1));
}

// Whether the cache can keep a launch by these: outputs an exact list or
// tuple of kinds it can keep.
bool keepable(PyObject *Entry, PyObject *Object, PyObject *Outputs) {
  if (!isStr(Entry) || (Object != Py_None && !isStr(Object)))
    return false;
  if (!PyList_CheckExact(Outputs) && !PyTuple_CheckExact(Outputs))
    return false;
  Py_ssize_t N = PySequence_Fast_GET_SIZE(Outputs);
  for (Py_ssize_t I = 0; I < N; ++I)
    if (!keepableKind(PySequence_Fast_GET_ITEM(Outputs, I)))
      return false;
  return true;
}

PyObject *find(const Launches &L, PyObject *Entry, PyObject *Object, PyObject *Outputs) {
  Py_ssize_t N = PySequence_Fast_GET_SIZE(Outputs);
  PyObject **Items = PySequence_Fast_ITEMS(Outputs);
  for (const Kept &K : L.All) {
    if (K.Kinds.size() != static_cast<size_t>(N) || !sameItem(Entry, K.Entry.ptr()) ||
        !sameObject(Object, K.Object.ptr()))
      continue;
    size_t I = 0;
    while (I < K.Kinds.size() && sameKind(Items[I], K.Kinds[I].ptr()))
      ++I;
    if (I == K.Kinds.size())
      return K.Prepared.ptr();
  }
  return nullptr;
}

// A str (or bytes, as pybind11 takes them) as std::string; None as "".
std::string text(py::handle Value, const char *What) {
  if (Value.is_none())
    return {};
  if (!PyUnicode_Check(Value.ptr()) && !PyBytes_Check(Value.ptr()))
    throw py::type_error(std::string(What) + " must be a str, not " +
                         std::string(py::str(Value.get_type().attr("__name__"))));
  return Value.cast<std::string>();
}

py::object prepareAndKeep(Launches &L, py::handle Entry, py::handle Object, py::handle Outputs,
                          bool Keep) {
  // A tuple of its own: the caller's list may change while the kinds are
  // parsed, and what is kept must be what was parsed.
  auto Kinds = py::reinterpret_steal<py::tuple>(PySequence_Tuple(Outputs.ptr()));
  if (!Kinds)
    throw py::error_already_set();
  py::object Prepared =
      prepareLaunch(L.On, text(Entry, "entry"), text(Object, "obj"), py::sequence(Kinds));
  if (!Keep)
    return Prepared;
  Kept New{py::reinterpret_borrow<py::object>(Entry),
           py::reinterpret_borrow<py::object>(Object),
           {},
           Prepared};
  for (py::handle Kind : Kinds)
    New.Kinds.push_back(py::reinterpret_borrow<py::object>(Kind));
  Kept Oldest; // let go of after the vector is whole again
  if (L.All.size() >= MaxLaunches) {
    Oldest = std::move(L.All.front());
    L.All.erase(L.All.begin());
  }
  L.All.push_back(std::move(New));
  return Prepared;
}

PyObject *vectorcall(PyObject *Self, PyObject *const *Args, size_t NArgs, PyObject *KwNames) {
  if (PyVectorcall_NARGS(NArgs) != 3 || (KwNames && PyTuple_GET_SIZE(KwNames) != 0)) {
    PyErr_SetString(PyExc_TypeError, "a launch cache takes (entry, obj, outputs)");
    return nullptr;
  }
  Launches &L = *reinterpret_cast<CacheObject *>(Self)->Cache;
  try {
    bool Keep = keepable(Args[0], Args[1], Args[2]);
    if (Keep)
      if (PyObject *Found = find(L, Args[0], Args[1], Args[2]))
        return Py_NewRef(Found);
    return prepareAndKeep(L, Args[0], Args[1], Args[2], Keep).release().ptr();
  } catch (...) {
    return failedCall();
  }
}

void dealloc(PyObject *Self) {
  delete reinterpret_cast<CacheObject *>(Self)->Cache;
  releaseInstance(Self);
}

} // namespace

void registerLaunchCache(py::module_ &M) {
  CacheType = addCallableType(M, {"catalyst_remote._native.LaunchCache",
                                  "Session.launch's prepared launches: call it with "
                                  "(entry, obj, outputs) for the PreparedLaunch.",
                                  sizeof(CacheObject), offsetof(CacheObject, Call), dealloc});
}

py::object makeLaunchCache(std::shared_ptr<Target> On) {
  auto Cache = std::make_unique<Launches>();
  Cache->On = std::move(On);
  auto *Self = newInstance<CacheObject>(CacheType);
  Self->Call = vectorcall;
  Self->Cache = Cache.release();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject *>(Self));
}

} // namespace catalyst::remote::python
