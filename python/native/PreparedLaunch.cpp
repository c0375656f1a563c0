//===- PreparedLaunch.cpp - A launch bound once, called many times --------===//

#include "PreparedLaunch.h"

#include "Errors.h"
#include "NativeType.h"
#include "catalyst/remote/RemoteBindings.h"

#include <cstddef>
#include <vector>

namespace catalyst::remote::python {

namespace {

// What a prepared launch keeps. Its dtypes are released with the GIL held
// (the object's deallocation).
struct Binding {
  std::shared_ptr<Target> On;
  std::string Entry, Object;
  std::vector<OutputKind> Kinds;
  std::vector<bool> Keep; // empty, or one per output

  py::tuple run(PyObject *const *Inputs, size_t N) const {
    Descriptors::Round R;
    Descriptors &D = R.get();
    for (size_t I = 0; I < N; ++I)
      D.addInput(Inputs[I], I);
    for (size_t I = 0; I < Kinds.size(); ++I) {
      D.addOutput(Kinds[I]);
      if (I < Keep.size() && Keep[I])
        D.keepLast();
    }
    return On->launch(Entry, Object, D);
  }
};

struct PreparedObject {
  PyObject ob_base; // PyObject_HEAD
  vectorcallfunc Call;
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
  try {
    return bindingOf(Self).run(Args, PyVectorcall_NARGS(NArgs)).release().ptr();
  } catch (...) {
    return failedCall();
  }
}

void dealloc(PyObject *Self) {
  delete reinterpret_cast<PreparedObject *>(Self)->Bound;
  releaseInstance(Self);
}

PyObject *repr(PyObject *Self) {
  const Binding &B = bindingOf(Self);
  return PyUnicode_FromFormat("<PreparedLaunch %s in %s, %zu outputs>", B.Entry.c_str(),
                              B.Object.c_str(), B.Kinds.size());
}

} // namespace

void registerPreparedLaunch(py::module_ &M) {
  PreparedType =
      addCallableType(M, {"catalyst_remote._native.PreparedLaunch",
                          "A launch of one entry with fixed output kinds: call it with the inputs.",
                          sizeof(PreparedObject), offsetof(PreparedObject, Call), dealloc, repr});
}

py::object prepareLaunch(std::shared_ptr<Target> On, std::string Entry, std::string Object,
                         const py::sequence &Outputs, std::vector<bool> Keep) {
  if (!Keep.empty() && Keep.size() != Outputs.size())
    raise(CATALYST_REMOTE_BAD_ARGUMENT, std::to_string(Keep.size()) + " keep flags for " +
                                            std::to_string(Outputs.size()) + " outputs");
  auto Bound = std::make_unique<Binding>();
  Bound->On = std::move(On);
  Bound->Entry = std::move(Entry);
  Bound->Object = std::move(Object);
  for (size_t I = 0; I < Outputs.size(); ++I)
    Bound->Kinds.push_back(parseOutputKind(Outputs[I], I));
  Bound->Keep = std::move(Keep);
  auto *Self = newInstance<PreparedObject>(PreparedType);
  Self->Call = vectorcall;
  Self->Bound = Bound.release();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject *>(Self));
}

} // namespace catalyst::remote::python
