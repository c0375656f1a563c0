//===- UpstreamExecutor.h - Either executor, started as Catalyst does -*- C++ -*-===//
//
// The tests of tests/upstream run against catalyst-remote-executor or
// Catalyst's catalyst-executor, as the environment variable UPSTREAM_EXECUTOR
// says: ours, ours-upstream-only (with --upstream-only) or catalyst. (One
// variable: CMake 3.25's gtest_discover_tests splits a list given as a
// test's ENVIRONMENT.) Either is started the way Catalyst's launcher
// (catalyst.executor.Executor) starts one: `EXE --bind=127.0.0.1:PORT
// --plugin=PATH...` with stdout and stderr merged into one pipe, ready once a
// line says `Listening on 127.0.0.1:PORT`, another port tried when that one
// is taken. Catalyst's executor cannot be asked for port 0 (it prints the
// port it was given, not the one bound), hence a port chosen here.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_UPSTREAM_UPSTREAMEXECUTOR_H
#define CATALYST_REMOTE_TESTS_UPSTREAM_UPSTREAMEXECUTOR_H

#include <atomic>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace upstream {

// Where the test kernels' shipped objects are (e.g. "map" -> ".../map.o").
std::string kernelObject(const std::string &File);

// "ours", "ours-upstream-only" or "catalyst", from UPSTREAM_EXECUTOR (ours
// when unset).
std::string executorName();

class Executor {
public:
  // The chosen executor with both test plugins, TMPDIR set to a directory
  // of the build's for it and this process; null, with Error saying why,
  // when it does not come up.
  static std::unique_ptr<Executor> start(std::string &Error);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  // "127.0.0.1:PORT".
  const std::string &address() const { return Address; }

private:
  Executor(pid_t Pid, int Out, std::string Address);
  void forward();

  pid_t Pid;
  int Out;
  std::string Address;
  std::atomic<bool> Stopping{false};
  std::thread Forwarder;
};

} // namespace upstream

#endif
