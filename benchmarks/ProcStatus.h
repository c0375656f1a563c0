//===- ProcStatus.h - Memory figures Linux keeps in /proc -------*- C++ -*-===//

#ifndef CATALYST_REMOTE_BENCH_PROCSTATUS_H
#define CATALYST_REMOTE_BENCH_PROCSTATUS_H

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::bench {

// A "Field:  N kB" line of /proc/<Pid>/status (Pid 0: this process), in
// bytes: VmRSS (resident now), VmHWM (the most ever resident).
std::optional<uint64_t> statusBytes(pid_t Pid, const std::string &Field);

// MemAvailable from /proc/meminfo, in bytes.
std::optional<uint64_t> memAvailable();

// The live children of Pid.
std::vector<pid_t> childrenOf(pid_t Pid);

// The one child of Pid that is not in Before, or 0 when there is not exactly
// one: how a session's connection process is told apart from the others.
pid_t newChildOf(pid_t Pid, const std::vector<pid_t> &Before);

constexpr double bytesToMiB(uint64_t Bytes) {
  return double(Bytes) / double(1 << 20);
}

} // namespace catalyst::remote::bench

#endif
