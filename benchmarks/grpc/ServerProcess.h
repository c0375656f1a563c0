//===- ServerProcess.h - A gRPC server the baseline starts itself -*- C++ -*-===//
//
// The benchmark and the probe run against a catalyst-remote-grpc-server of
// their own on loopback, as they do against an executor of their own. It is
// told to listen on port 0 and reports the port it got on its first stdout
// line.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_GRPC_SERVERPROCESS_H
#define CATALYST_REMOTE_BENCH_GRPC_SERVERPROCESS_H

#include <chrono>
#include <memory>
#include <string>
#include <sys/types.h>
#include <unistd.h>

namespace catalyst::remote::grpcbench {

class ServerProcess {
public:
  // Spawns Path --listen 127.0.0.1:0 on CPU Cpu (-1: wherever the calling
  // thread may run) and waits up to Timeout for its listening line.
  static std::unique_ptr<ServerProcess>
  start(const std::string &Path, int Cpu, std::chrono::milliseconds Timeout, std::string &Error);
  // Sends SIGTERM and reaps the server (SIGKILL if it lingers).
  ~ServerProcess();
  ServerProcess(const ServerProcess &) = delete;
  ServerProcess &operator=(const ServerProcess &) = delete;

  const std::string &address() const { return Address; }
  pid_t pid() const { return Pid; }

private:
  ServerProcess(pid_t Pid, int StdoutFd) : Pid(Pid), Owner(getpid()), StdoutFd(StdoutFd) {}
  std::string readAddress(std::chrono::milliseconds Timeout);

  pid_t Pid;
  // A child forked from the owner (without exec) has a copy of this object;
  // its exit must not stop the owner's server.
  pid_t Owner;
  // Kept open, never read again: the server writes nothing more there, and
  // closing it would turn a stray write into SIGPIPE.
  int StdoutFd;
  std::string Address;
};

} // namespace catalyst::remote::grpcbench

#endif
