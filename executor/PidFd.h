//===- PidFd.h - A descriptor readable once a process ends ------*- C++ -*-===//
//
// Owns a pidfd (Linux 5.3): poll() reports it readable once the process it
// was opened on has ended. Watching a process this way wakes a poll loop
// at once, with no signal and no looking again.
//
//    PidFd P = PidFd::open(Pid);   // !P.valid() before Linux 5.3, or for a
//                                  // process already gone
//    poll({P.fd(), POLLIN}, ...);  // -1 when invalid: poll skips it
//
// Thread-safety: none; one owner.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_EXECUTOR_PIDFD_H
#define CATALYST_REMOTE_EXECUTOR_PIDFD_H

#include <sys/types.h>

namespace catalyst::remote::executor {

class PidFd {
public:
  PidFd() = default;
  static PidFd open(pid_t Pid);
  PidFd(PidFd &&Other) noexcept;
  PidFd &operator=(PidFd &&Other) noexcept;
  PidFd(const PidFd &) = delete;
  PidFd &operator=(const PidFd &) = delete;
  ~PidFd();

  bool valid() const { return Fd >= 0; }
  int fd() const { return Fd; }
  // The process has ended (readable now). False when invalid.
  bool ended() const;

private:
  int Fd = -1;
};

} // namespace catalyst::remote::executor

#endif
