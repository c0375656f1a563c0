//===- Module.cpp - catalyst_remote._native -------------------------------===//
//
// The extension the Python package is written over: a Target (one session
// or pool, a handle of RemoteBindings.h) and a PreparedLaunch (an entry,
// its object and its outputs' kinds, parsed once). Everything else, from
// futures to executors, is Python (catalyst_remote/*.py).
//
// pybind11 rather than ctypes: a ctypes call alone costs microseconds,
// more than the budget of a tiny launch beside the C ABI's (Debian ships
// pybind11 2.10; nanobind is not packaged).
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "Interrupt.h"
#include "Memrefs.h"
#include "catalyst/remote/RemoteBindings.h"

#include <atomic>
#include <memory>
#include <pybind11/stl.h>
#include <string>
#include <vector>

namespace catalyst::remote::python {

namespace {

// One session or pool, open until close() (or until the object dies).
// Any thread may call any method: the library serializes what must be.
class Target {
public:
  static std::shared_ptr<Target> open(const std::string &Address,
                                      const std::vector<std::string> &Options) {
    std::vector<const char *> Raw;
    for (const std::string &O : Options)
      Raw.push_back(O.c_str());
    int64_t Handle = 0;
    int32_t Status;
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_open(Address.c_str(), Raw.data(), Raw.size(), &Handle);
    }
    check(Status);
    return std::make_shared<Target>(Handle);
  }

  explicit Target(int64_t Handle) : Handle(Handle) {}
  ~Target() {
    if (int64_t H = Handle.exchange(0)) {
      py::gil_scoped_release Free;
      // Nobody is left to tell: a caller who wants close()'s error calls it.
      (void)catalyst_remote_close(H);
    }
  }

  int64_t handle() const {
    int64_t H = Handle.load();
    if (!H)
      raise(CATALYST_REMOTE_CLOSED, "the session is closed");
    return H;
  }

  void sendBinary(const std::string &Path, uint32_t Format) {
    int64_t H = handle();
    int32_t Status;
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_send_binary(H, Path.c_str(), Format);
    }
    check(Status);
  }

  py::bytes callWrapper(const std::string &Symbol, const std::string &Args) {
    int64_t H = handle();
    void *Out = nullptr;
    size_t Size = 0;
    int32_t Status;
    {
      InterruptibleCall Guard(H);
      {
        py::gil_scoped_release Free;
        Status =
            catalyst_remote_call_wrapper(H, Symbol.c_str(), Args.data(), Args.size(), &Out, &Size);
      }
      if (Guard.interrupted())
        interruptedOn(H);
    }
    check(Status);
    py::bytes Result(static_cast<const char *>(Out), Size);
    __catalyst__remote__free_result(Out);
    return Result;
  }

  // Runs a launch whose descriptors D holds, the GIL released; Ctrl-C on
  // the main thread closes the target and raises KeyboardInterrupt.
  py::tuple launch(const std::string &Entry, const std::string &Object, Descriptors &D) {
    int64_t H = handle();
    D.seal();
    int32_t Status;
    {
      InterruptibleCall Guard(H);
      {
        py::gil_scoped_release Free;
        Status = catalyst_remote_launch(H, Entry.c_str(), Object.c_str(), D.numInputs(), D.inputs(),
                                        D.inputRanks(), D.inputElemSizes(), D.numOutputs(),
                                        D.outputs(), D.outputRanks(), D.outputElemSizes());
      }
      if (Guard.interrupted())
        interruptedOn(H);
    }
    check(Status);
    return D.takeOutputs();
  }

  void startTrace(const std::string &Path) {
    int64_t H = handle();
    int32_t Status;
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_start_trace(H, Path.c_str());
    }
    check(Status);
  }

  // Waits for the calls writing to the trace, hence without the GIL.
  void stopTrace() {
    int64_t H = handle();
    int32_t Status;
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_stop_trace(H);
    }
    check(Status);
  }

  std::string describe() {
    int64_t H = handle();
    char *Json = nullptr;
    int32_t Status;
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_describe(H, &Json);
    }
    check(Status);
    std::string Text(Json ? Json : "{}");
    __catalyst__remote__free_result(Json);
    return Text;
  }

  void close() {
    int64_t H = Handle.exchange(0);
    if (!H)
      return;
    int32_t Status;
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_close(H);
    }
    check(Status);
  }

  bool closed() const { return Handle.load() == 0; }

private:
  // SIGINT closed H under a call (InterruptibleCall): this target is closed
  // for good, and the caller hears KeyboardInterrupt.
  [[noreturn]] void interruptedOn(int64_t H) {
    int64_t Mine = H;
    Handle.compare_exchange_strong(Mine, 0);
    {
      py::gil_scoped_release Free;
      // The watcher may not have closed it yet; a second close is harmless,
      // and its failure is the interrupted call's, which is not reported.
      (void)catalyst_remote_close(H);
    }
    raiseInterrupt();
  }

  std::atomic<int64_t> Handle;
};

// A launch of one entry with fixed output kinds, called many times.
class PreparedLaunch {
public:
  PreparedLaunch(std::shared_ptr<Target> On, std::string Entry, std::string Object,
                 const py::sequence &Outputs)
      : On(std::move(On)), Entry(std::move(Entry)), Object(std::move(Object)) {
    for (size_t I = 0; I < Outputs.size(); ++I)
      Kinds.push_back(parseOutputKind(Outputs[I], I));
  }

  py::tuple operator()(const py::args &Inputs) {
    Descriptors::Round R;
    Descriptors &D = R.get();
    for (size_t I = 0; I < Inputs.size(); ++I)
      D.addInput(Inputs[I], I);
    for (const OutputKind &K : Kinds)
      D.addOutput(K);
    return On->launch(Entry, Object, D);
  }

private:
  std::shared_ptr<Target> On;
  std::string Entry, Object;
  std::vector<OutputKind> Kinds;
};

} // namespace

} // namespace catalyst::remote::python

using namespace catalyst::remote::python;

PYBIND11_MODULE(_native, M) {
  M.doc() = "catalyst_remote's native layer; use the catalyst_remote package instead.";
  loadErrorClasses();
  recordMainThread();
  py::class_<Target, std::shared_ptr<Target>>(M, "Target")
      .def_static("open", &Target::open, py::arg("address"), py::arg("options"))
      .def("send_binary", &Target::sendBinary, py::arg("path"), py::arg("format"))
      .def("call_wrapper", &Target::callWrapper, py::arg("symbol"), py::arg("args"))
      .def("start_trace", &Target::startTrace, py::arg("path"))
      .def("stop_trace", &Target::stopTrace)
      .def("describe", &Target::describe)
      .def("close", &Target::close)
      .def_property_readonly("closed", &Target::closed)
      .def("prepare", [](std::shared_ptr<Target> T, std::string Entry, std::string Object,
                         const py::sequence &Outputs) {
        return PreparedLaunch(std::move(T), std::move(Entry), std::move(Object), Outputs);
      });
  py::class_<PreparedLaunch>(M, "PreparedLaunch").def("__call__", &PreparedLaunch::operator());
}
