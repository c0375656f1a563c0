//===- PidFd.cpp - A descriptor readable once a process ends -------------===//

#include "PidFd.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

namespace catalyst::remote::executor {

PidFd PidFd::open(pid_t Pid) {
  PidFd P;
#ifdef SYS_pidfd_open
  // ENOSYS on kernels before 5.3, ESRCH for a process already gone: the
  // caller then looks by other means.
  long Fd = ::syscall(SYS_pidfd_open, Pid, 0);
  P.Fd = Fd >= 0 ? int(Fd) : -1;
#endif
  return P;
}

PidFd::PidFd(PidFd &&Other) noexcept : Fd(std::exchange(Other.Fd, -1)) {}

PidFd &PidFd::operator=(PidFd &&Other) noexcept {
  if (this != &Other) {
    if (Fd >= 0)
      ::close(Fd);
    Fd = std::exchange(Other.Fd, -1);
  }
  return *this;
}

PidFd::~PidFd() {
  if (Fd >= 0)
    ::close(Fd);
}

bool PidFd::ended() const {
  pollfd P{Fd, POLLIN, 0};
  return Fd >= 0 && ::poll(&P, 1, 0) > 0;
}

} // namespace catalyst::remote::executor
