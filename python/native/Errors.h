//===- Errors.h - Library failures as Python exceptions ---------*- C++ -*-===//
//
// Every binding call returns a status (RemoteBindings.h): the kind of its
// failure, with the message in __catalyst__remote__last_error(). check()
// raises the exception class catalyst_remote.errors keeps for that kind,
// carrying the library's message, so nothing reaches Python as an abort.
//
// Usage (GIL held):
//   check(Status);                      // returns on success, else throws
//   try { ... } catch (...) { return failedCall(); }   // in a raw entry
//
// Thread safety: call with the GIL held, on the thread that made the call
// (the message is that thread's).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_ERRORS_H
#define CATALYST_REMOTE_PYTHON_ERRORS_H

#include <cstdint>
#include <pybind11/pybind11.h>
#include <string>

namespace catalyst::remote::python {

namespace py = pybind11;

// Looks the classes up once (at import), from catalyst_remote.errors.
void loadErrorClasses();

// Throws the exception for Kind with Message (GIL held).
[[noreturn]] void raise(int32_t Kind, const std::string &Message);

// Returns when Status is 0; else raises with this thread's last error.
void check(int32_t Status);

// In a catch (...) of a function CPython calls directly (not through
// pybind11): sets the Python error for the C++ exception in flight, as
// pybind11 would, and returns nullptr for the function to return.
PyObject *failedCall();

} // namespace catalyst::remote::python

#endif
