//===- Errors.cpp - Library failures as Python exceptions -----------------===//

#include "Errors.h"

#include "catalyst/remote/RemoteBindings.h"

#include <array>
#include <exception>
#include <new>

namespace catalyst::remote::python {

namespace {

// By status; index 0 unused. Strong references, kept for the process's
// life (the module is never unloaded).
std::array<PyObject *, CATALYST_REMOTE_BUSY + 1> Classes{};

const char *className(int32_t Kind) {
  switch (Kind) {
  case CATALYST_REMOTE_BAD_ARGUMENT:
    return "BadArgument";
  case CATALYST_REMOTE_AUTHENTICATION:
    return "AuthenticationError";
  case CATALYST_REMOTE_UNREACHABLE:
    return "ExecutorUnreachable";
  case CATALYST_REMOTE_EXECUTOR_LOST:
    return "ExecutorLost";
  case CATALYST_REMOTE_KERNEL_CRASHED:
    return "KernelCrashed";
  case CATALYST_REMOTE_TIMEOUT:
    return "Timeout";
  case CATALYST_REMOTE_CLOSED:
    return "SessionClosed";
  case CATALYST_REMOTE_BUSY:
    return "ExecutorBusy";
  default:
    return "Error";
  }
}

} // namespace

void loadErrorClasses() {
  py::module_ Errors = py::module_::import("catalyst_remote.errors");
  for (int32_t Kind = CATALYST_REMOTE_OTHER; Kind <= CATALYST_REMOTE_BUSY; ++Kind)
    Classes[Kind] = py::object(Errors.attr(className(Kind))).release().ptr();
}

void raise(int32_t Kind, const std::string &Message) {
  PyObject *Class = Kind > 0 && Kind <= CATALYST_REMOTE_BUSY ? Classes[Kind] : nullptr;
  PyErr_SetString(Class ? Class : Classes[CATALYST_REMOTE_OTHER], Message.c_str());
  throw py::error_already_set();
}

void check(int32_t Status) {
  if (Status != CATALYST_REMOTE_OK)
    raise(Status, __catalyst__remote__last_error());
}

PyObject *failedCall() {
  try {
    throw;
  } catch (py::error_already_set &E) {
    E.restore();
  } catch (py::builtin_exception &E) {
    E.set_error();
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  } catch (const std::exception &E) {
    PyErr_SetString(PyExc_RuntimeError, E.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "an unknown C++ exception");
  }
  return nullptr;
}

} // namespace catalyst::remote::python
