//===- ParentWatch.cpp - Ending with the launcher that started it ---------===//

#include "ParentWatch.h"

#include <cstdlib>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

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
#ifdef SYS_pidfd_open
  // ENOSYS on kernels before 5.3, ESRCH for a parent already gone: either
  // way gone() still tells, by looking.
  long Fd = ::syscall(SYS_pidfd_open, Parent, 0);
  W.Fd = Fd >= 0 ? int(Fd) : -1;
#endif
  return W;
}

ParentWatch::ParentWatch(ParentWatch &&Other) noexcept
    : Parent(std::exchange(Other.Parent, 0)), Fd(std::exchange(Other.Fd, -1)) {}

ParentWatch &ParentWatch::operator=(ParentWatch &&Other) noexcept {
  if (this != &Other) {
    if (Fd >= 0)
      ::close(Fd);
    Parent = std::exchange(Other.Parent, 0);
    Fd = std::exchange(Other.Fd, -1);
  }
  return *this;
}

ParentWatch::~ParentWatch() {
  if (Fd >= 0)
    ::close(Fd);
}

int ParentWatch::pollTimeoutMs() const {
  return watching() && Fd < 0 ? int(WithoutPidfd.count()) : -1;
}

// getppid() rather than the pidfd's readiness: a pidfd opened after the
// parent ended (and its pid reused) would watch the wrong process, while
// the parent pid changes for good once this process is reparented.
bool ParentWatch::gone() const {
  return watching() && ::getppid() != Parent;
}

} // namespace catalyst::remote::executor
