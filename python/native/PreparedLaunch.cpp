//===- PreparedLaunch.cpp - A launch bound once, called many times --------===//

#include "PreparedLaunch.h"

#include "Errors.h"

#include <cstddef>
#include <structmember.h>
#include <vector>

namespace catalyst::remote::python {

namespace {

// What a prepared launch keeps. Its dtypes are released with the GIL held
// (the object's deallocation).
struct Binding {
  std::shared_ptr<Target> On;
  std::string Entry, Object;
  std::vector<OutputKind> Kinds;

  py::tuple run(PyObject *const *Inputs, size_t N) const {
    Descriptors::Round R;
    Descriptors &D = R.get();
    for (size_t I = 0; I < N; ++I)
      D.addInput(Inputs[I], I);
    for (const OutputKind &K : Kinds)
      D.addOutput(K);
    return On->launch(Entry, Object, D);
  }
};

struct PreparedObject {
  PyObject_HEAD vectorcallfunc Call;
  Binding *Bound; // owned
};

// Made at import (registerPreparedLaunch); lives as long as the process.
PyTypeObject *PreparedType = nullptr;

Binding &bindingOf(PyObject *Self) {
  return *reinterpret_cast<PreparedObject *>(Self)->Bound;
}

PyObject *vectorcall(PyObject *Self, PyObject *const *Args, size_t NArgs, PyObject *KwNames) {
  if (KwNames && PyTuple_GET_SIZE(KwNames) != 0) {
    PyErr_SetString(PyExc_TypeError, "a prepared launch takes its inputs as positional "
                                     "arguments, not keywords");
    return nullptr;
  }
  return callPrepared(Self, Args, PyVectorcall_NARGS(NArgs));
}

void dealloc(PyObject *Self) {
  PyTypeObject *Type = Py_TYPE(Self);
  delete reinterpret_cast<PreparedObject *>(Self)->Bound;
  Type->tp_free(Self);
  Py_DECREF(Type); // an instance of a heap type holds its type
}

PyObject *repr(PyObject *Self) {
  const Binding &B = bindingOf(Self);
  return PyUnicode_FromFormat("<PreparedLaunch %s in %s, %zu outputs>", B.Entry.c_str(),
                              B.Object.c_str(), B.Kinds.size());
}

} // namespace

void registerPreparedLaunch(py::module_ &M) {
  static PyMemberDef Members[] = {
      {"__vectorcalloffset__", T_PYSSIZET, offsetof(PreparedObject, Call), READONLY, nullptr},
      {nullptr, 0, 0, 0, nullptr}};
  static PyType_Slot Slots[] = {
      {Py_tp_doc, const_cast<char *>(
                      "A launch of one entry with fixed output kinds: call it with the inputs.")},
      {Py_tp_dealloc, reinterpret_cast<void *>(dealloc)},
      {Py_tp_repr, reinterpret_cast<void *>(repr)},
      {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
      {Py_tp_members, Members},
      {0, nullptr}};
  static PyType_Spec Spec = {
      "catalyst_remote._native.PreparedLaunch", sizeof(PreparedObject), 0,
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION, Slots};
  auto Type = py::reinterpret_steal<py::object>(PyType_FromSpec(&Spec));
  if (!Type)
    throw py::error_already_set();
  PreparedType = reinterpret_cast<PyTypeObject *>(Type.inc_ref().ptr()); // kept for good
  M.add_object("PreparedLaunch", Type);
}

py::object prepareLaunch(std::shared_ptr<Target> On, std::string Entry, std::string Object,
                         const py::sequence &Outputs) {
  auto Bound = std::make_unique<Binding>();
  Bound->On = std::move(On);
  Bound->Entry = std::move(Entry);
  Bound->Object = std::move(Object);
  for (size_t I = 0; I < Outputs.size(); ++I)
    Bound->Kinds.push_back(parseOutputKind(Outputs[I], I));
  auto *Self = PyObject_New(PreparedObject, PreparedType);
  if (!Self)
    throw py::error_already_set();
  Self->Call = vectorcall;
  Self->Bound = Bound.release();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject *>(Self));
}

PyObject *callPrepared(py::handle Prepared, PyObject *const *Args, size_t N) {
  try {
    return bindingOf(Prepared.ptr()).run(Args, N).release().ptr();
  } catch (...) {
    return failedCall();
  }
}

} // namespace catalyst::remote::python
