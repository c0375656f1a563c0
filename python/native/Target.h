//===- Target.h - One open session or pool, for Python ----------*- C++ -*-===//
//
// A session or pool the package opened (a handle of RemoteBindings.h),
// open until close() or until its last owner lets go. Every call turns a
// failure into the Python exception for its kind (Errors.h), releases the
// GIL while it waits, and on Python's main thread stops on Ctrl-C
// (Interrupt.h), closing the target for good.
//
// Usage (GIL held):
//   std::shared_ptr<Target> T = Target::open("127.0.0.1:7000", {"transport=local"});
//   T->sendBinary("kernels.o", 0);
//   py::tuple Outputs = T->launch(Entry, Object, Descriptors);
//   T->close();
//
// Thread safety: any thread may call any method with the GIL held; the
// library serializes what must be. The handle is the only state (atomic:
// close() and a Ctrl-C on another call may race to take it).
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_PYTHON_TARGET_H
#define CATALYST_REMOTE_PYTHON_TARGET_H

#include "Memrefs.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <pybind11/pybind11.h>
#include <string>
#include <vector>

namespace catalyst::remote::python {

namespace py = pybind11;

class Target {
public:
  static std::shared_ptr<Target> open(const std::string &Address,
                                      const std::vector<std::string> &Options);

  explicit Target(int64_t Handle) : Handle(Handle) {}
  ~Target();
  Target(const Target &) = delete;
  Target &operator=(const Target &) = delete;

  // The open handle; throws SessionClosed once closed.
  int64_t handle() const;

  void sendBinary(const std::string &Path, uint32_t Format);
  py::bytes callWrapper(const std::string &Symbol, const std::string &Args);
  // Runs a launch whose descriptors D holds; the outputs as arrays (a kept
  // one as its resident handle and shape, Memrefs.h).
  py::tuple launch(const std::string &Entry, const std::string &Object, Descriptors &D);
  // Resident tensors (RemoteBindings.h): Array kept in the executor, its
  // handle returned; a resident's values as a fresh array of Kind; freed.
  int64_t upload(py::handle Array);
  py::array fetch(int64_t Resident, const OutputKind &Kind);
  void release(int64_t Resident);
  void startTrace(const std::string &Path);
  // Waits for the calls writing to the trace, hence without the GIL.
  void stopTrace();
  std::string describe();
  void close();
  bool closed() const { return Handle.load() == 0; }

private:
  // SIGINT closed H under a call: this target is closed for good, and the
  // caller hears KeyboardInterrupt.
  [[noreturn]] void interruptedOn(int64_t H);

  std::atomic<int64_t> Handle;
};

} // namespace catalyst::remote::python

#endif
