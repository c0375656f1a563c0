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

// Runs Argv (Argv[0] is the binary's path) with stdin closed and waits up
// to Timeout; a program still running then is killed.
CommandResult runCommand(const std::vector<std::string> &Argv,
                         std::chrono::milliseconds Timeout = std::chrono::seconds(10));

} // namespace catalyst::remote::test

#endif
