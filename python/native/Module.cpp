//===- Module.cpp - catalyst_remote._native -------------------------------===//
//
// The extension the Python package is written over: a Target (one session
// or pool, Target.h), a PreparedLaunch (an entry, its object and its
// outputs' kinds, parsed once: PreparedLaunch.h) and a LaunchCache
// (Session.launch's PreparedLaunches, LaunchCache.h). Everything else, from
// futures to executors, is Python (catalyst_remote/*.py).
//
// pybind11 rather than ctypes: a ctypes call alone costs microseconds,
// more than the budget of a tiny launch beside the C ABI's (Debian ships
// pybind11 2.10; nanobind is not packaged). The launch path itself goes
// around pybind11's dispatcher (PreparedLaunch.h says why).
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "Interrupt.h"
#include "LaunchCache.h"
#include "PreparedLaunch.h"
#include "Target.h"

#include <memory>
#include <pybind11/stl.h>
#include <string>

using namespace catalyst::remote::python;

PYBIND11_MODULE(_native, M) {
  M.doc() = "catalyst_remote's native layer; use the catalyst_remote package instead.";
  loadErrorClasses();
  recordMainThread();
  registerPreparedLaunch(M);
  registerLaunchCache(M);
  M.def("set_resident_type", &setResidentType, py::arg("type"));
  py::class_<Target, std::shared_ptr<Target>>(M, "Target")
      .def_static("open", &Target::open, py::arg("address"), py::arg("options"))
      .def("send_binary", &Target::sendBinary, py::arg("path"), py::arg("format"))
      .def("call_wrapper", &Target::callWrapper, py::arg("symbol"), py::arg("args"))
      .def("start_trace", &Target::startTrace, py::arg("path"))
      .def("stop_trace", &Target::stopTrace)
      .def("describe", &Target::describe)
      .def("close", &Target::close)
      .def_property_readonly("closed", &Target::closed)
      .def(
          "prepare",
          [](std::shared_ptr<Target> T, std::string Entry, std::string Object,
             const py::sequence &Outputs, std::vector<bool> Keep) {
            return prepareLaunch(std::move(T), std::move(Entry), std::move(Object), Outputs,
                                 std::move(Keep));
          },
          py::arg("entry"), py::arg("obj"), py::arg("outputs"),
          py::arg("keep") = std::vector<bool>())
      .def("upload", &Target::upload, py::arg("array"))
      .def(
          "fetch",
          [](Target &T, int64_t Resident, const py::handle &Kind) {
            return T.fetch(Resident, parseOutputKind(Kind, 0));
          },
          py::arg("resident"), py::arg("kind"))
      .def("release", &Target::release, py::arg("resident"))
      .def("launch_cache", [](std::shared_ptr<Target> T) { return makeLaunchCache(std::move(T)); });
}
