//===- ListeningChild.h - A server process started for a harness -*- C++ -*-===//
//
// Tests and benchmarks start their own servers (the executor, the gRPC
// baseline) on port 0 and learn the port from the server's first stdout
// line, "... listening on ADDRESS". This spawns one, waits for that line,
// and stops it (SIGTERM, then SIGKILL after a grace period) and reaps it.
// Plain POSIX and std: no LLVM, no test framework, so every harness can
// use it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TOOLS_LISTENINGCHILD_H
#define CATALYST_REMOTE_TOOLS_LISTENINGCHILD_H

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace catalyst::remote::tools {

struct ChildSpec {
  // Argv[0] is the binary's path.
  std::vector<std::string> Argv;
  // NAME=VALUE entries replacing or adding to this process's environment;
  // a bare NAME removes that variable.
  std::vector<std::string> Env = {};
  // The CPU the child runs on from its first instruction (-1: wherever the
  // calling thread may run). Pinning later would miss threads it starts at
  // once.
  int Cpu = -1;
  std::chrono::milliseconds Timeout = std::chrono::seconds(10);
  // Copy what the child prints after its listening line to our stderr, on a
  // thread of ours. Without it the pipe stays open and unread, which suits
  // a child that prints nothing more, and a parent that forks later (a
  // forked copy of this process has no such thread).
  bool ForwardStdout = false;
  // Where the child's stderr goes (appended); empty: ours.
  std::string StderrPath = {};
};

class ListeningChild {
public:
  // Null, with Error saying why, when the child cannot be spawned or prints
  // no listening line within Spec.Timeout.
  static std::unique_ptr<ListeningChild> start(const ChildSpec &Spec, std::string &Error);
  ~ListeningChild();
  ListeningChild(const ListeningChild &) = delete;
  ListeningChild &operator=(const ListeningChild &) = delete;

  const std::string &address() const { return Address; }
  // -1 once stopped.
  pid_t pid() const { return Pid; }

  // SIGTERM, then SIGKILL when the child outlives Grace; reaps it. False
  // when it had to be killed. Does nothing in a forked copy of the owner.
  bool stop(std::chrono::milliseconds Grace = std::chrono::seconds(5));

private:
  ListeningChild(pid_t Pid, int StdoutFd);
  std::string readAddress(std::chrono::milliseconds Timeout);
  void forward();

  pid_t Pid;
  const pid_t Owner;
  int StdoutFd;
  std::string Address;
  std::string Pending; // stdout read past the listening line
  std::atomic<bool> Stopping{false};
  std::thread Forwarder;
};

} // namespace catalyst::remote::tools

#endif
