//===- Pinning.h - Which CPUs the benchmark's processes run on --*- C++ -*-===//
//
// On a virtual machine, waking a process on the other, idle CPU can cost
// more than a whole small exchange, and where the scheduler puts the
// executor and the raw peer changes from run to run and even within one:
// unpinned, a launch and the raw exchange beside it may be timed under
// different placements. Pinning makes the placement the same for both.
//
// CATALYST_REMOTE_BENCH_PIN picks it:
//   split (default)  the benchmark on one CPU, the executor (with its
//                    connection processes) and the raw peer on another,
//                    as when the executor runs on another machine
//   same             every process on one CPU: software costs alone
//   none             the scheduler decides
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_PINNING_H
#define CATALYST_REMOTE_BENCH_PINNING_H

#include "llvm/Support/Error.h"

#include <string>
#include <sys/types.h>

namespace catalyst::remote::bench {

struct CpuPlan {
  enum Mode { None, Same, Split } How = None;
  int Bench = -1; // the benchmark's CPU
  int Peers = -1; // the executor's and the raw peer's CPU
};

// From CATALYST_REMOTE_BENCH_PIN and the CPUs this process may run on;
// split falls back to same with a single CPU.
llvm::Expected<CpuPlan> planCpus();

// Pins the calling thread (Pid 0: threads and children it starts later
// inherit it) or the process Pid, which must have a single thread.
llvm::Error pinTo(pid_t Pid, int Cpu);

std::string describe(const CpuPlan &Plan);

} // namespace catalyst::remote::bench

#endif
