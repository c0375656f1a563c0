//===- PreparedLaunch.h - A launch bound once, called many times -*- C++ -*-===//
//
// What Session.prepare returns: an entry, its object and its outputs'
// kinds, parsed once; calling it with the inputs launches. It is a CPython
// type of its own, not a pybind11 class, so that a call goes from the
// interpreter straight to the launch (vectorcall, the inputs as the
// caller's own argument array): pybind11's dispatcher builds an argument
// tuple, a call record and casters on every call, which cost a fifth of an
// 8-byte launch's budget beside the C ABI.
//
// Usage (GIL held):
//   registerPreparedLaunch(Module);                        // at import
//   py::object Call = prepareLaunch(T, "entry", "k.o", Outputs);
//   // from Python: Call(x, y) -> tuple of arrays (positional inputs only)
//
// Thread safety: immutable once made; called from any thread, each call
// with the GIL held but for the launch itself.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_PREPAREDLAUNCH_H
#define CATALYST_REMOTE_PYTHON_PREPAREDLAUNCH_H

#include "Target.h"

#include <memory>
#include <pybind11/pybind11.h>
#include <string>

namespace catalyst::remote::python {

namespace py = pybind11;

// Adds the type to M as PreparedLaunch (not constructible from Python).
void registerPreparedLaunch(py::module_ &M);

// A launch of Entry in Object on On, with an output per (dtype, rank) of
// Outputs; throws what parseOutputKind throws for a bad one. Keep, empty
// or a flag per output, names the outputs that stay in the executor: the
// call returns each as its (resident handle, shape).
py::object prepareLaunch(std::shared_ptr<Target> On, std::string Entry, std::string Object,
                         const py::sequence &Outputs, std::vector<bool> Keep = {});

} // namespace catalyst::remote::python

#endif
