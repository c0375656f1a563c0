//===- MpiRun.cpp - Open MPI's mpirun started by a test ------------------===//

#include "MpiRun.h"

#include "Command.h"

#include <csignal>

namespace catalyst::remote::test {

std::string MpiRun::missingPackage() {
  std::string Path = findProgram("mpirun");
  if (Path.empty())
    return "openmpi-bin";
  // Debian's alternatives may point mpirun at MPICH's Hydra.
  CommandResult R = runCommand({Path, "--version"});
  return R.Output.find("Open MPI") == std::string::npos ? "openmpi-bin" : "";
}

::testing::AssertionResult MpiRun::start(unsigned Ranks, const std::vector<std::string> &Argv,
                                         const std::string &OutputPath,
                                         const std::vector<std::string> &MpirunArgs,
                                         const std::vector<std::string> &Env) {
  // On SIGTERM mpirun sends the ranks SIGCONT, sleeps this many seconds,
  // sends SIGTERM, sleeps again and sends SIGKILL. Each rank that ends
  // interrupts the second sleep, and the sleep resumes with what remains
  // rounded down: at the default of one second, SIGKILL follows the first
  // rank's end at once, before a loaded machine ran the others' handlers.
  // One second more than the ranks leaves the last rank at least one.
  std::string SigkillAfter = std::to_string(Ranks + 1);
  std::vector<std::string> Command = {findProgram("mpirun"),
                                      "--allow-run-as-root",
                                      "--oversubscribe",
                                      "--mca",
                                      "odls_base_sigkill_timeout",
                                      SigkillAfter,
                                      "-n",
                                      std::to_string(Ranks)};
  Command.insert(Command.end(), MpirunArgs.begin(), MpirunArgs.end());
  Command.insert(Command.end(), Argv.begin(), Argv.end());
  return Run.start(Command, OutputPath, Env);
}

bool MpiRun::terminate() {
  return Run.running() && ::kill(Run.pid(), SIGTERM) == 0;
}

} // namespace catalyst::remote::test
