//===- DirectKernel.h - The scale kernel in a process of ours ---*- C++ -*-===//
//
// What the scale kernel costs with nothing remote about it: the very object
// the executor links (kernels/scale.o, linked into this binary too), called
// in a child process of the benchmark on warm memory, that is with its
// fresh output malloc'ed from memory the previous call faulted in.
//
// Why a child process: this binary's malloc is mimalloc's (linked before
// libc, as in the executor), which maps a 256 MiB block fresh from the
// system on every malloc and unmaps it on free, so glibc's mallopt
// (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD) would not reach it. Freed blocks
// stay faulted in when mimalloc takes them from a committed arena reserved
// up front, as the executor's connections do (executor/Retention.cpp). In
// the benchmark's own process that arena would also warm the fresh output
// buffers launches are received into, flattering every other row; the
// child keeps it to itself. The child runs on the executor's CPU
// (Pinning.h), where the remote kernel runs, and counts each call's minor
// page faults, so a call on cold memory shows in the results.
//
// Against an executor on another machine (CATALYST_REMOTE_ADDRESS), this
// still runs here: the comparison is then across machines.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_DIRECTKERNEL_H
#define CATALYST_REMOTE_BENCH_DIRECTKERNEL_H

#include "ListeningChild.h"
#include "Pinning.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>

namespace catalyst::remote::bench {

class DirectKernel {
public:
  // Starts the child for an input of Bytes (a multiple of 8: f64 elements)
  // and connects to it; the first call it serves runs on cold memory.
  static llvm::Expected<std::unique_ptr<DirectKernel>> start(const CpuPlan &Pins, uint64_t Bytes);
  // Hangs up, which ends the child, and reaps it.
  ~DirectKernel();
  DirectKernel(const DirectKernel &) = delete;
  DirectKernel &operator=(const DirectKernel &) = delete;

  struct Call {
    double Seconds;  // the kernel call alone, its output's malloc included
    uint64_t Faults; // minor page faults during it
  };
  // One call of scale in the child, its output checked there and freed.
  llvm::Expected<Call> call();

private:
  DirectKernel(std::unique_ptr<tools::ListeningChild> Child, int Fd)
      : Child(std::move(Child)), Fd(Fd) {}

  std::unique_ptr<tools::ListeningChild> Child;
  int Fd; // our connection to the child
};

// main() hands over to the child's side when argv[1] is this flag:
// `catalyst-remote-bench --direct-kernel-child BYTES`.
inline const char *const DirectKernelChildFlag = "--direct-kernel-child";
int runDirectKernelChild(int Argc, char **Argv);

} // namespace catalyst::remote::bench

#endif
