//===- ExecutorProcess.h - A catalyst-remote-executor for one test -*- C++ -*-===//
//
// Spawns the executor on an ephemeral loopback port (or where asked), waits
// for the line announcing its address, and stops it (SIGTERM, then reaping)
// when the object goes away. The binary is the one built with the tests unless
// CATALYST_REMOTE_EXECUTOR names another.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_EXECUTORPROCESS_H
#define CATALYST_REMOTE_TESTS_EXECUTORPROCESS_H

#include "ListeningChild.h"
#include "TempDir.h"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::test {

struct ExecutorOptions {
  bool UpstreamOnly = false;
  std::vector<std::string> Plugins;
  // Extra NAME=VALUE entries added to the executor's environment. The
  // secret variables of the test's own environment (CATALYST_REMOTE_TOKEN,
  // CATALYST_REMOTE_TOKEN_FILE) are not passed on: only these.
  std::vector<std::string> Env;
  // Extra command-line arguments, e.g. {"--max-message", "1"}.
  std::vector<std::string> Args = {};
  // A file the executor's log (stderr) is appended to; empty: ours.
  std::string LogPath = {};
  // Where it listens. This default, when CATALYST_REMOTE_TEST_TRANSPORT is
  // "unix", stands for a socket file in a private folder of its own.
  std::string Bind = DefaultBind;
  static constexpr const char *DefaultBind = "127.0.0.1:0";
  // A command the executor runs under, which must exec it in its place
  // (e.g. {"/usr/bin/env", "ip", "netns", "exec", NS}); Prefix[0] is a path.
  std::vector<std::string> Prefix = {};
};

class ExecutorProcess {
public:
  ExecutorProcess() = default;
  ~ExecutorProcess();
  ExecutorProcess(const ExecutorProcess &) = delete;
  ExecutorProcess &operator=(const ExecutorProcess &) = delete;

  // Spawns the executor and waits up to StartTimeout for its address.
  ::testing::AssertionResult start(const ExecutorOptions &Options = {});

  const std::string &address() const { return Address; }
  pid_t pid() const { return Child ? Child->pid() : -1; }

  // The processes serving this executor's connections right now.
  std::vector<pid_t> connectionPids() const;

  // Waits until exactly N connection processes exist and returns them.
  ::testing::AssertionResult waitForConnections(size_t N, std::vector<pid_t> &Pids,
                                                std::chrono::milliseconds Timeout) const;

  // Sends SIGTERM and reaps the executor; false if it outlived Timeout (it
  // is then killed).
  bool stop(std::chrono::milliseconds Timeout = std::chrono::seconds(10));

  static constexpr std::chrono::seconds StartTimeout{10};

private:
  std::unique_ptr<tools::ListeningChild> Child;
  std::string Address;
  std::unique_ptr<TempDir> SocketDir; // the socket file's, when it has one
};

// Whether this run's executors listen at socket files where tests do not
// say where (CATALYST_REMOTE_TEST_TRANSPORT=unix).
bool socketFileRun();

// The executor binary the tests run.
std::string executorPath();

// O, loading the plugin that logs Catalyst's runtime hooks to Dir/rt.log,
// and with the executor's own log in Dir/executor.log.
ExecutorOptions withRuntimeLog(const std::string &Dir, ExecutorOptions O = {});

} // namespace catalyst::remote::test

#endif
