//===- SrunWatch.h - Ending with the srun that started the step -*- C++ -*-===//
//
// An executor that srun started is a child of slurmstepd, not of srun:
// watching its parent (ParentWatch.h) sees the node agent go, but not
// srun. An srun killed inside an allocation (a job script's cleanup, the
// OOM killer) leaves its step running until the job ends, its executors
// listening and announced; an srun run as a job of its own has Slurm
// cancel the step with SIGKILL, which gives no executor the chance to
// withdraw its announcement.
//
// So an executor on the machine where srun runs watches srun itself. It
// finds srun as the process, named "srun", that listens on the port
// Slurm gives every task of the step (SLURM_SRUN_COMM_PORT, where srun
// takes the tasks' messages), and holds a pidfd on it; the listener's
// poll() wakes the moment srun ends. The executor then withdraws its
// announcement, asks Slurm to signal the step with SIGTERM (so that its
// executors on other machines, which cannot see srun, stop as on a stop
// signal too), and stops.
//
//    SrunWatch W = SrunWatch::find();   // nothing watched off srun's node
//    poll({W.fd(), POLLIN}, ...);       // W.fd() may be -1: poll ignores it
//    if (W.gone()) { endStep(); ... }
//
// Thread-safety: one thread (the listener's) owns it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_SRUNWATCH_H
#define CATALYST_REMOTE_EXECUTOR_SRUNWATCH_H

#include "PidFd.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::executor {

// The inodes of the TCP sockets listening on Port in ProcNetTcp's text
// (the format of /proc/net/tcp and /proc/net/tcp6). Lines that do not
// parse are skipped.
std::vector<uint64_t> listeningInodes(const std::string &ProcNetTcp, uint16_t Port);

class SrunWatch {
public:
  // How often srun is looked at without a pidfd.
  static constexpr std::chrono::milliseconds WithoutPidfd{200};

  // Nothing to watch: gone() stays false.
  SrunWatch() = default;
  // The srun of this process's step, when it runs on this machine, in
  // this network namespace and as a user whose processes this one may
  // look at; else nothing watched.
  static SrunWatch find();

  bool watching() const { return Srun > 0; }
  pid_t srun() const { return Srun; }
  // Readable once srun ended; -1 without a pidfd (poll skips it).
  int fd() const { return Fd.fd(); }
  // How long the listener may sleep before it must look again: forever
  // (-1) with a pidfd or nothing watched, else WithoutPidfd.
  int pollTimeoutMs() const;
  bool gone() const;
  // Asks Slurm to send SIGTERM to every task of this step, and waits a
  // bounded time for scancel to return. Says on the log what failed; the
  // executor stops either way.
  void endStep() const;

private:
  pid_t Srun = 0;
  PidFd Fd;
};

} // namespace catalyst::remote::executor

#endif
