//===- LaunchCache.h - Session.launch's prepared launches -------*- C++ -*-===//
//
// Session.launch(entry, obj, *inputs, outputs=[...]) names its launch
// anew on every call. A LaunchCache turns that name into the
// PreparedLaunch made for it the first time, so that launching the same
// kernel again costs a few comparisons in C++, not a parse of the output
// kinds (nor a Python dict key built from them). It is a CPython type
// called by vectorcall (NativeType.h).
//
// Usage (GIL held):
//   registerLaunchCache(M);                       // at import
//   py::object Cache = makeLaunchCache(T);
//   // from Python: Cache(entry, obj, outputs) -> a PreparedLaunch
//
// What is kept: launches whose entry is a str, obj a str or None (as
// prepare() has it, ""), and outputs a list or tuple of (dtype, rank)
// tuples whose dtype is a str, a type or a NumPy dtype and rank an int:
// what cannot change once made. Others (a list as a kind, a structured
// dtype spelt as a list) are prepared every time, as unhashable kinds
// were before. What matches: equal exact strs for entry and obj; for
// each kind the very tuple kept, or one whose items are each the same
// object as the kept one's or an equal exact str or int. At most
// MaxLaunches are kept; the oldest goes first.
//
// Thread safety: every call holds the GIL. Parsing new output kinds may
// run Python code, and so let another thread use the cache meanwhile: no
// reference into the kept launches lives across it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_LAUNCHCACHE_H
#define CATALYST_REMOTE_PYTHON_LAUNCHCACHE_H

#include "Target.h"

#include <memory>
#include <pybind11/pybind11.h>

namespace catalyst::remote::python {

namespace py = pybind11;

// Adds the type to M as LaunchCache (not constructible from Python).
void registerLaunchCache(py::module_ &M);

// An empty cache of launches on On.
py::object makeLaunchCache(std::shared_ptr<Target> On);

} // namespace catalyst::remote::python

#endif
