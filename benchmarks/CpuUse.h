//===- CpuUse.h - Who kept the CPUs busy in a measurement -------*- C++ -*-===//
//
// On a machine with few CPUs, a benchmark that spreads work over several
// executors may be limited by the CPUs rather than by what it measures.
// This tells which, by measurement: the CPU time the benchmark, the
// executors (with their connection processes) and the delay relays of a
// network lab used over the timed spells, the kernel's softirq time
// (where network stacks, shapers and veth pairs do their work), and what
// the whole machine used, so that the rest, other processes, shows too.
//
//   CpuWatch W{ExecutorPids, RelayPids};
//   CpuUse Use;
//   CpuSample Before = W.sample();
//   ... timed work ...
//   Use.add(Before, W.sample());
//   Use.report(State.counters);     // cpu_* counters, in CPUs busy
//
// Figures come from /proc/stat and /proc/<pid>/stat in clock ticks
// (10 ms here): sum many short spells rather than trusting one.
//
// Thread safety: none; one measurement's thread uses it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_CPUUSE_H
#define CATALYST_REMOTE_BENCH_CPUUSE_H

#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdint>
#include <map>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::bench {

// CPU seconds used so far, per group, at one moment.
struct CpuSample {
  std::chrono::steady_clock::time_point At;
  double Host = 0;    // this process, every thread
  double Members = 0; // the executors and their children alive now
  double Relays = 0;
  double Softirq = 0; // the whole machine's
  double Busy = 0;    // the whole machine's, everything but idle and steal
  // Per child of an executor: its time when sampled, so that a child that
  // started between two samples counts from zero.
  std::map<pid_t, double> Children;
};

struct CpuWatch {
  std::vector<pid_t> Executors; // their connection processes count too
  std::vector<pid_t> Relays;

  CpuSample sample() const;
};

// CPU time summed over spells, against their wall time.
class CpuUse {
public:
  void add(const CpuSample &Before, const CpuSample &After);
  // cpu_host, cpu_members, cpu_relays, cpu_softirq, cpu_machine and
  // cpu_other (the machine's less the others), each in CPUs kept busy on
  // average (2 = both CPUs of a 2-CPU machine all the time).
  void report(benchmark::UserCounters &C) const;

private:
  double Wall = 0, Host = 0, Members = 0, Relays = 0, Softirq = 0, Busy = 0;
};

// The CPU time of one process (user and system, every thread), in seconds;
// 0 when it is gone.
double processCpuSeconds(pid_t Pid);

} // namespace catalyst::remote::bench

#endif
