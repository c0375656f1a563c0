//===- Target.cpp - One open session or pool, for Python ------------------===//

#include "Target.h"

#include "Errors.h"
#include "Interrupt.h"
#include "catalyst/remote/RemoteBindings.h"

namespace catalyst::remote::python {

std::shared_ptr<Target> Target::open(const std::string &Address,
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

Target::~Target() {
  if (int64_t H = Handle.exchange(0)) {
    py::gil_scoped_release Free;
    // Nobody is left to tell: a caller who wants close()'s error calls it.
    (void)catalyst_remote_close(H);
  }
}

int64_t Target::handle() const {
  int64_t H = Handle.load();
  if (!H)
    raise(CATALYST_REMOTE_CLOSED, "the session is closed");
  return H;
}

void Target::sendBinary(const std::string &Path, uint32_t Format) {
  int64_t H = handle();
  int32_t Status;
  {
    py::gil_scoped_release Free;
    Status = catalyst_remote_send_binary(H, Path.c_str(), Format);
  }
  check(Status);
}

py::bytes Target::callWrapper(const std::string &Symbol, const std::string &Args) {
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

py::tuple Target::launch(const std::string &Entry, const std::string &Object, Descriptors &D) {
  int64_t H = handle();
  D.seal();
  int32_t Status;
  {
    InterruptibleCall Guard(H);
    {
      py::gil_scoped_release Free;
      if (D.inputResidents() || D.keptOutputs())
        Status = catalyst_remote_launch_residents(
            H, Entry.c_str(), Object.c_str(), D.numInputs(), D.inputs(), D.inputRanks(),
            D.inputElemSizes(), D.numOutputs(), D.outputs(), D.outputRanks(), D.outputElemSizes(),
            D.inputResidents(), D.keptOutputs());
      else
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

int64_t Target::upload(py::handle Array) {
  int64_t H = handle();
  Descriptors::Round R;
  Descriptors &D = R.get();
  D.addInput(Array, 0);
  D.seal();
  if (D.inputResidents())
    raise(CATALYST_REMOTE_BAD_ARGUMENT, "the array to upload is a resident already");
  int64_t Resident = 0;
  int32_t Status;
  {
    InterruptibleCall Guard(H);
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_upload(H, D.inputs()[0], D.inputRanks()[0], D.inputElemSizes()[0],
                                      &Resident);
    }
    if (Guard.interrupted())
      interruptedOn(H);
  }
  check(Status);
  return Resident;
}

py::array Target::fetch(int64_t Resident, const OutputKind &Kind) {
  int64_t H = handle();
  Descriptors::Round R;
  Descriptors &D = R.get();
  D.addOutput(Kind);
  D.seal();
  int32_t Status;
  {
    InterruptibleCall Guard(H);
    {
      py::gil_scoped_release Free;
      Status = catalyst_remote_fetch(Resident, D.outputs()[0], D.outputRanks()[0],
                                     D.outputElemSizes()[0], nullptr, 0);
    }
    if (Guard.interrupted())
      interruptedOn(H);
  }
  check(Status);
  return D.takeOutputs()[0].cast<py::array>();
}

void Target::release(int64_t Resident) {
  // Not handle(): a closed session's residents are gone with it, which
  // the library says as it does for any released handle.
  int32_t Status;
  {
    py::gil_scoped_release Free;
    Status = catalyst_remote_release(Resident);
  }
  check(Status);
}

void Target::startTrace(const std::string &Path) {
  int64_t H = handle();
  int32_t Status;
  {
    py::gil_scoped_release Free;
    Status = catalyst_remote_start_trace(H, Path.c_str());
  }
  check(Status);
}

void Target::stopTrace() {
  int64_t H = handle();
  int32_t Status;
  {
    py::gil_scoped_release Free;
    Status = catalyst_remote_stop_trace(H);
  }
  check(Status);
}

std::string Target::describe() {
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

void Target::close() {
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

void Target::interruptedOn(int64_t H) {
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

} // namespace catalyst::remote::python
