//===- MpiRun.h - Open MPI's mpirun started by a test ----------*- C++ -*-===//
//
// Starts `mpirun --allow-run-as-root --oversubscribe --mca
// odls_base_sigkill_timeout N+1 -n N PROGRAM ARGS` (Open MPI) beside the
// test, in a process group of its own, with its output in a file. As root
// mpirun refuses to run without the first flag, and beyond the machine's
// cores without the second. On SIGTERM, mpirun sends every rank SIGCONT,
// then after N+1 seconds SIGTERM, then SIGKILL once the ranks that ended
// cut the second wait short (MpiRun.cpp says how); the third flag leaves
// the last rank at least a second to handle SIGTERM.
//
//   if (std::string P = MpiRun::missingPackage(); !P.empty())
//     GTEST_SKIP() << "needs the Debian package " << P;
//   MpiRun Mpi;
//   ASSERT_TRUE(Mpi.start(4, {executorPath(), ...}, Dir.path("mpirun.out")));
//   Mpi.terminate(); ASSERT_TRUE(Mpi.wait(10s));
//
// The destructor stops a run still going (BackgroundCommand). Not
// thread-safe: one test thread owns it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_MPIRUN_H
#define CATALYST_REMOTE_TESTS_MPIRUN_H

#include "BackgroundCommand.h"

#include <chrono>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace catalyst::remote::test {

class MpiRun {
public:
  // "openmpi-bin" when Open MPI's mpirun is missing (MPICH's mpiexec
  // forwards SIGTERM only to its direct child, so it would not do), or "".
  static std::string missingPackage();

  // Starts Ranks copies of Argv (Argv[0] is a path) under mpirun, with
  // MpirunArgs before them (e.g. {"-x", "NAME"}) and Env added to the
  // environment.
  ::testing::AssertionResult start(unsigned Ranks, const std::vector<std::string> &Argv,
                                   const std::string &OutputPath,
                                   const std::vector<std::string> &MpirunArgs = {},
                                   const std::vector<std::string> &Env = {});

  // SIGTERM to mpirun alone, as a batch system ends a job: mpirun passes
  // it on to the ranks.
  bool terminate();
  // Waits for mpirun to end; false while it still runs.
  bool wait(std::chrono::milliseconds Timeout) { return Run.wait(Timeout); }
  BackgroundCommand &command() { return Run; }

private:
  BackgroundCommand Run;
};

} // namespace catalyst::remote::test

#endif
