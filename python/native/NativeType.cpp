//===- NativeType.cpp - CPython types the extension defines itself --------===//

#include "NativeType.h"

#include <cstring>
#include <structmember.h>
#include <vector>

namespace catalyst::remote::python {

PyTypeObject *addCallableType(py::module_ &M, const CallableType &T) {
  // PyType_FromSpec copies the members, slots and doc; only the name must
  // outlive the type.
  PyMemberDef Members[] = {{"__vectorcalloffset__", T_PYSSIZET,
                            static_cast<Py_ssize_t>(T.CallOffset), READONLY, nullptr},
                           {nullptr, 0, 0, 0, nullptr}};
  std::vector<PyType_Slot> Slots = {{Py_tp_doc, const_cast<char *>(T.Doc)},
                                    {Py_tp_dealloc, reinterpret_cast<void *>(T.Dealloc)},
                                    {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
                                    {Py_tp_members, Members}};
  if (T.Repr)
    Slots.push_back({Py_tp_repr, reinterpret_cast<void *>(T.Repr)});
  Slots.push_back({0, nullptr});
  PyType_Spec Spec = {T.Name, static_cast<int>(T.Size), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL |
                          Py_TPFLAGS_DISALLOW_INSTANTIATION,
                      Slots.data()};
  auto Type = py::reinterpret_steal<py::object>(PyType_FromSpec(&Spec));
  if (!Type)
    throw py::error_already_set();
  const char *Dot = std::strrchr(T.Name, '.');
  M.add_object(Dot ? Dot + 1 : T.Name, Type);
  // The module holds one reference; this one keeps the type for the
  // functions that make instances, whatever becomes of the module.
  return reinterpret_cast<PyTypeObject *>(Type.release().ptr());
}

void releaseInstance(PyObject *Self) {
  PyTypeObject *Type = Py_TYPE(Self);
  Type->tp_free(Self);
  Py_DECREF(Type);
}

} // namespace catalyst::remote::python
