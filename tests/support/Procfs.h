//===- Procfs.h - What /proc says about test processes ----------*- C++ -*-===//

#ifndef CATALYST_REMOTE_TESTS_PROCFS_H
#define CATALYST_REMOTE_TESTS_PROCFS_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::test {

// Live (not zombie) processes whose parent is Parent. Scans /proc, since
// /proc/<pid>/task/<tid>/children needs a kernel option that may be off.
std::vector<pid_t> childrenOf(pid_t Parent);

// Pid's parent, or -1 when Pid is gone.
pid_t parentOf(pid_t Pid);

// True while Pid exists and is not a zombie.
bool processAlive(pid_t Pid);

// VmRSS of Pid in KiB, or -1 when unreadable.
int64_t residentKiB(pid_t Pid);

// Zombie processes whose parent is Parent: children it has not reaped.
std::vector<pid_t> zombiesOf(pid_t Parent);

// Entries in /proc/<pid>/fd (open file descriptors), or -1 when unreadable.
int64_t openFdCount(pid_t Pid);

// Threads of Pid (the Threads line of /proc/<pid>/status), or -1.
int64_t threadCount(pid_t Pid);

// Waits until every thread of Pid is asleep (state S in its stat line),
// for at most Timeout; false if it never was.
bool waitUntilAsleep(pid_t Pid, std::chrono::milliseconds Timeout);

// Waits until every thread of Pid has stopped (state T: SIGSTOP takes
// effect on each thread as it next enters the kernel, not when kill()
// returns), for at most Timeout; false if they never did.
bool waitUntilStopped(pid_t Pid, std::chrono::milliseconds Timeout);

// Page faults Pid has taken that needed no disk (first touches of fresh
// pages among them), or -1.
int64_t minorFaults(pid_t Pid);

// The whole file, or "" when it cannot be read.
std::string readFile(const std::string &Path);

// Waits up to Timeout until Pid has exited (a zombie not yet reaped
// counts), on its own.
bool waitUntilExited(pid_t Pid, std::chrono::milliseconds Timeout);

// Waits up to Timeout until the file at Path contains What (a log line
// another process writes after the event the test saw).
bool waitForText(const std::string &Path, const std::string &What,
                 std::chrono::milliseconds Timeout);

// Live processes running the binary at Exe (as /proc/<pid>/exe names it)
// with Argument among their command-line arguments: the executors a test
// started with a folder of its own in their arguments, and the connection
// processes they forked, wherever a launcher put them in the process tree.
std::vector<pid_t> processesRunning(const std::string &Exe, const std::string &Argument);

// Live processes whose environment holds Entry ("NAME=VALUE") exactly.
std::vector<pid_t> processesWithEnvironment(const std::string &Entry);

// The value of Name in Pid's environment, or "" when unset or unreadable.
std::string environmentOf(pid_t Pid, const std::string &Name);

// Checks Condition every few milliseconds until it holds, for at most
// Timeout; false if it never did.
bool waitUntil(const std::function<bool()> &Condition, std::chrono::milliseconds Timeout);

} // namespace catalyst::remote::test

#endif
