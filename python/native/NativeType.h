//===- NativeType.h - CPython types the extension defines itself -*- C++ -*-===//
//
// The types on the launch path (PreparedLaunch, LaunchCache) are CPython
// heap types rather than pybind11 classes: a call to one reaches its C++
// through vectorcall (the interpreter's own argument array), without
// pybind11's dispatcher. Each file that defines one keeps its instance
// layout, starting with `PyObject ob_base` and holding the vectorcall
// function; this makes the type and its instances.
//
// Usage (GIL held):
//   Type = addCallableType(M, {"catalyst_remote._native.Name", Doc,
//                              sizeof(Obj), offsetof(Obj, Call), dealloc});
//   Obj *O = newInstance<Obj>(Type);     // then set O->Call and the rest
//   // dealloc: free what O holds, then releaseInstance(O)
//
// The types are not constructible from Python, and are kept for the
// process's life.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_NATIVETYPE_H
#define CATALYST_REMOTE_PYTHON_NATIVETYPE_H

#include <cstddef>
#include <pybind11/pybind11.h>

namespace catalyst::remote::python {

namespace py = pybind11;

struct CallableType {
  const char *Name; // "catalyst_remote._native.X": a literal (the type keeps it)
  const char *Doc;
  size_t Size;
  size_t CallOffset; // of the instance's vectorcallfunc
  destructor Dealloc;
  reprfunc Repr = nullptr;
};

// Makes the type and adds it to M under the last part of its name.
PyTypeObject *addCallableType(py::module_ &M, const CallableType &T);

// A new instance of Type, its own fields unset; throws on failure.
template <typename Object> Object *newInstance(PyTypeObject *Type) {
  Object *O = PyObject_New(Object, Type);
  if (!O)
    throw py::error_already_set();
  return O;
}

// Frees Self's memory and lets go of its type (an instance of a heap
// type holds its type): the end of a dealloc.
void releaseInstance(PyObject *Self);

} // namespace catalyst::remote::python

#endif
