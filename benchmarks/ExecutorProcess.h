//===- ExecutorProcess.h - An executor the benchmark starts itself -*- C++ -*-===//
//
// The benchmark runs against a catalyst-remote-executor of its own on
// loopback, so one command measures the whole path with nothing set up by
// hand. The executor is told to bind port 0 and reports the port it got on
// its first stdout line.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_EXECUTORPROCESS_H
#define CATALYST_REMOTE_BENCH_EXECUTORPROCESS_H

#include "llvm/Support/Error.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>

namespace catalyst::remote::bench {

class ExecutorProcess {
public:
  // Spawns Path and waits up to Timeout for its "listening on HOST:PORT" line.
  static llvm::Expected<std::unique_ptr<ExecutorProcess>> start(const std::string &Path,
                                                                std::chrono::milliseconds Timeout);

  // Sends SIGTERM and reaps the process (SIGKILL if it lingers).
  ~ExecutorProcess();

  ExecutorProcess(const ExecutorProcess &) = delete;
  ExecutorProcess &operator=(const ExecutorProcess &) = delete;

  const std::string &address() const { return Address; }
  // The listening process; each session is served by a child of it.
  pid_t pid() const { return Pid; }

private:
  ExecutorProcess(pid_t Pid, int StdoutFd) : Pid(Pid), StdoutFd(StdoutFd) {}

  llvm::Error readAddress(std::chrono::milliseconds Timeout);
  void forwardRestOfStdout();
  void stop();

  pid_t Pid;
  int StdoutFd;
  std::string Address;
  std::string Pending; // stdout bytes read past the first line
  std::atomic<bool> Stopping{false};
  std::thread Forwarder;
};

} // namespace catalyst::remote::bench

#endif
