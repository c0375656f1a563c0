//===- ParentWatch.cpp - Ending with the launcher that started it ---------===//

#include "ParentWatch.h"

#include <cstdlib>
#include <initializer_list>
#include <unistd.h>

namespace catalyst::remote::executor {

bool launchedByLauncher() {
  // A step of a job (srun, or sbatch's batch step), Open MPI's mpirun, or
  // any PMIx launcher (prterun, srun --mpi=pmix).
  for (const char *Name : {"SLURM_STEP_ID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (std::getenv(Name))
      return true;
  return false;
}

ParentWatch ParentWatch::start(pid_t Parent) {
  ParentWatch W;
  W.Parent = Parent;
  // Without a pidfd (a kernel before 5.3, a parent already gone), gone()
  // still tells, by looking.
  W.Fd = PidFd::open(Parent);
  return W;
}

int ParentWatch::pollTimeoutMs() const {
  return watching() && !Fd.valid() ? int(WithoutPidfd.count()) : -1;
}

// getppid() rather than the pidfd's readiness: a pidfd opened after the
// parent ended (and its pid reused) would watch the wrong process, while
// the parent pid changes for good once this process is reparented.
bool ParentWatch::gone() const {
  return watching() && ::getppid() != Parent;
}

} // namespace catalyst::remote::executor
