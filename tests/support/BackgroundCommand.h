//===- BackgroundCommand.h - A program a test runs beside itself -*- C++ -*-===//
//
// A launcher (srun, mpirun) that runs for as long as its job, started by a
// test that carries on meanwhile: in a process group of its own, so that a
// signal reaches the launcher and whatever it forked on this machine but
// not the test; with stdin closed and stdout and stderr appended to a file
// the test can read; sent SIGTERM if the test's thread ends first (a test
// killed by its timeout). The destructor stops what is still running
// (SIGTERM to the group, SIGKILL after a grace period) and reaps it.
//
//   BackgroundCommand Run;
//   ASSERT_TRUE(Run.start({"/usr/bin/mpirun", ...}, Dir.path("mpirun.out")));
//   Run.signal(SIGTERM);
//   ASSERT_TRUE(Run.wait(10s));   // Run.status() then says how it ended
//
// Not thread-safe: one test thread owns it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_BACKGROUNDCOMMAND_H
#define CATALYST_REMOTE_TESTS_BACKGROUNDCOMMAND_H

#include <chrono>
#include <gtest/gtest.h>
#include <string>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::test {

class BackgroundCommand {
public:
  BackgroundCommand() = default;
  ~BackgroundCommand();
  BackgroundCommand(const BackgroundCommand &) = delete;
  BackgroundCommand &operator=(const BackgroundCommand &) = delete;

  // Spawns Argv (Argv[0] is a path) with this process's environment and
  // Env's NAME=VALUE entries replacing or adding to it; its output is
  // appended to OutputPath.
  ::testing::AssertionResult start(const std::vector<std::string> &Argv,
                                   const std::string &OutputPath,
                                   const std::vector<std::string> &Env = {});

  // Sends Signal to the whole process group; false once it has been reaped.
  bool signal(int Signal);

  // Waits up to Timeout for the program to end and reaps it; false while it
  // still runs.
  bool wait(std::chrono::milliseconds Timeout);

  // SIGTERM to the group, SIGKILL to it after Grace; reaps the program.
  // False when it had to be killed.
  bool stop(std::chrono::milliseconds Grace = std::chrono::seconds(10));

  pid_t pid() const { return Pid; }
  bool running() const { return Pid > 0 && !Reaped; }
  // How it ended, "exited with status N" or "was killed by SIGNAL"; "" while
  // it runs.
  std::string status() const;
  int exitStatus() const; // -1 unless it exited normally
  // All it has printed so far.
  std::string output() const;

private:
  pid_t Pid = -1;
  bool Reaped = false;
  int Status = 0;
  std::string OutputPath;
};

} // namespace catalyst::remote::test

#endif
