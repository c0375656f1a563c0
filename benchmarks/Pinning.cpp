//===- Pinning.cpp - Which CPUs the benchmark's processes run on ----------===//

#include "Pinning.h"

#include "llvm/ADT/StringRef.h"

#include <cerrno>
#include <cstdlib>
#include <sched.h>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

Expected<CpuPlan::Mode> modeFromEnv() {
  const char *Value = std::getenv("CATALYST_REMOTE_BENCH_PIN");
  StringRef V = Value ? Value : "";
  if (V.empty() || V == "split")
    return CpuPlan::Split;
  if (V == "same")
    return CpuPlan::Same;
  if (V == "none")
    return CpuPlan::None;
  return createStringError(inconvertibleErrorCode(),
                           "CATALYST_REMOTE_BENCH_PIN is '%s': use split, same or none", Value);
}

} // namespace

Expected<CpuPlan> planCpus() {
  auto How = modeFromEnv();
  if (!How)
    return How.takeError();
  CpuPlan Plan;
  Plan.How = *How;
  if (Plan.How == CpuPlan::None)
    return Plan;
  // The first two CPUs this process may use, so a run under taskset stays
  // within what it was given.
  cpu_set_t Allowed;
  if (::sched_getaffinity(0, sizeof(Allowed), &Allowed) != 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot read this process's CPUs");
  for (int Cpu = 0; Cpu < CPU_SETSIZE && Plan.Peers < 0; ++Cpu) {
    if (!CPU_ISSET(Cpu, &Allowed))
      continue;
    if (Plan.Bench < 0)
      Plan.Bench = Cpu;
    else
      Plan.Peers = Cpu;
  }
  if (Plan.How == CpuPlan::Same || Plan.Peers < 0) {
    Plan.How = CpuPlan::Same;
    Plan.Peers = Plan.Bench;
  }
  return Plan;
}

Error pinTo(pid_t Pid, int Cpu) {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  CPU_SET(Cpu, &Set);
  if (::sched_setaffinity(Pid, sizeof(Set), &Set) != 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot pin process %d to CPU %d", int(Pid), Cpu);
  return Error::success();
}

std::string describe(const CpuPlan &Plan) {
  if (Plan.How == CpuPlan::None)
    return "none: the scheduler decides";
  std::string Bench = std::to_string(Plan.Bench), Peers = std::to_string(Plan.Peers);
  if (Plan.How == CpuPlan::Same)
    return "same: every process on CPU " + Bench;
  return "split: the benchmark on CPU " + Bench + ", the executor and the raw peer on CPU " + Peers;
}

} // namespace catalyst::remote::bench
