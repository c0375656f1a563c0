//===- Command.h - Running a program to completion from a test --*- C++ -*-===//

#ifndef CATALYST_REMOTE_TESTS_COMMAND_H
#define CATALYST_REMOTE_TESTS_COMMAND_H

#include <chrono>
#include <string>
#include <vector>

namespace catalyst::remote::test {

struct CommandResult {
  int ExitStatus = -1; // -1 when it did not exit normally in time
  std::string Output;  // stdout and stderr, interleaved
};

// Runs Argv (Argv[0] is the binary's path) with stdin closed, this
// process's environment and Env's NAME=VALUE entries replacing or adding to
// it, and waits up to Timeout; a program still running then is killed.
CommandResult runCommand(const std::vector<std::string> &Argv,
                         std::chrono::milliseconds Timeout = std::chrono::seconds(10),
                         const std::vector<std::string> &Env = {});

// The path of the program Name, searched for on PATH and then in the
// system's sbin and bin folders (where daemons live, which a user's PATH
// may lack); "" when there is none.
std::string findProgram(const std::string &Name);

} // namespace catalyst::remote::test

#endif
