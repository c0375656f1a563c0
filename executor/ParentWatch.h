//===- ParentWatch.h - Ending with the launcher that started it -*- C++ -*-===//
//
// An executor started by a launcher (mpirun, srun, a job script, a Python
// Executor) must not outlive it: a launcher killed with SIGKILL, or out of
// memory, tells its children nothing, and they would go on listening,
// adopted by init. So the listener watches the process that started it,
// and stops as on a stop signal once that process has ended.
//
// It watches the parent process rather than taking PR_SET_PDEATHSIG,
// which fires when the parent's thread that forked ends, not the parent:
// a launcher that starts ranks from a worker thread would stop them
// early. A pidfd (Linux 5.3) wakes the listener's poll() the moment the
// parent ends; without one, the listener looks every WithoutPidfd.
//
//    ParentWatch W = ParentWatch::start(Parent);
//    poll({W.fd(), POLLIN}, ...);       // W.fd() may be -1: poll ignores it
//    if (W.gone()) ...                  // stop
//
// Thread-safety: one thread (the listener's) owns it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_PARENTWATCH_H
#define CATALYST_REMOTE_EXECUTOR_PARENTWATCH_H

#include "PidFd.h"

#include <chrono>
#include <sys/types.h>

namespace catalyst::remote::executor {

// Whether an executor ends with the process that started it.
enum class ParentPolicy {
  Auto,       // when a launcher is detected (launchedByLauncher)
  WithParent, // --with-parent
  Detach,     // --detach
};

// Slurm's or a PMIx launcher's (Open MPI's) environment variables name the
// step or job this process runs in. An executor started by hand from a
// shell has none of them, and keeps running when its shell goes.
bool launchedByLauncher();

class ParentWatch {
public:
  // How often the parent is looked at without a pidfd.
  static constexpr std::chrono::milliseconds WithoutPidfd{200};

  // Nothing to watch: gone() stays false.
  ParentWatch() = default;
  // Watches Parent, which must be the pid getppid() gave at start; a
  // parent already gone (getppid() differs) is gone() at once.
  static ParentWatch start(pid_t Parent);

  bool watching() const { return Parent > 0; }
  pid_t parent() const { return Parent; }
  // Readable once the parent ended; -1 without a pidfd (poll skips it).
  int fd() const { return Fd.fd(); }
  // How long the listener may sleep before it must look again: forever
  // (-1) with a pidfd or nothing watched, else WithoutPidfd.
  int pollTimeoutMs() const;
  // The parent ended: this process was handed to another (init, or a
  // subreaper).
  bool gone() const;

private:
  pid_t Parent = 0;
  PidFd Fd;
};

} // namespace catalyst::remote::executor

#endif
