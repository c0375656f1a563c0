//===- ClusterHarness.h - Executors started by a cluster's launcher -*- C++ -*-===//
//
// What the launcher tests share: the executor's command line as a job
// runs it (a loopback port the kernel chooses, a token file, --announce
// DIR), waiting for the announcement files, checking that an announced
// address serves sessions, and finding the executor processes a job left.
//
// SlurmTest is a fixture with a cluster up (skipping, naming the Debian
// package, where Slurm or munge is missing), a token and an empty
// announcement folder; startExecutors() runs N executors as a job and
// hands back their folder, for tests of what hosts do with them:
//
//   BackgroundCommand Srun;
//   ASSERT_TRUE(startExecutors(4, Srun, "pool"));
//   ... open("pool:" + announceDir()) ...
//
// Not thread-safe: one test thread.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_CLUSTERHARNESS_H
#define CATALYST_REMOTE_TESTS_CLUSTERHARNESS_H

#include "BackgroundCommand.h"
#include "SlurmCluster.h"
#include "TokenFile.h"
#include "catalyst/remote/Pool.h"

#include <chrono>
#include <gtest/gtest.h>
#include <string>
#include <sys/types.h>
#include <vector>

namespace catalyst::remote::test {

// How long executors may take to announce themselves, and a job's
// processes to be gone after it ends: well within the grace Slurm gives
// them between SIGTERM and SIGKILL (KillWait, SlurmCluster.h), so that an
// executor that does not end on SIGTERM is seen (Open MPI's grace, one
// second, hides one).
inline constexpr std::chrono::seconds AnnounceTimeout{30};
inline constexpr std::chrono::seconds EndTimeout{10};

// The executor as a launcher runs it: on 127.0.0.1, a port of its own
// choosing, with TokenPath's secret, announcing in Dir.
std::vector<std::string> executorCommand(const std::string &Dir, const std::string &TokenPath);

// The announcement files in Dir (*.addr; not the temporary ones being
// written), sorted.
std::vector<std::string> announcements(const std::string &Dir);

// Waits until Dir holds exactly N announcements; Names gets them.
::testing::AssertionResult waitForAnnouncements(const std::string &Dir, size_t N,
                                                std::vector<std::string> &Names);

// The address in Dir/Name, its first line.
std::string announcedAddress(const std::string &Dir, const std::string &Name);

// Opens a TCP session with the secret in TokenPath, pings, ships concat.o
// and checks a concat launch against the local kernel.
::testing::AssertionResult servesSessions(const std::string &Address, const std::string &TokenPath);

// Sends concat.o to P and runs Launches concat launches on it at once
// (asynchronous), each compared with the local kernel; Used gets how many
// members ran some.
::testing::AssertionResult poolLaunchesRight(Pool &P, size_t Launches, size_t &Used);

// Live executor processes (listeners and the connection processes they
// forked) started with --announce Dir.
std::vector<pid_t> executorsAnnouncingIn(const std::string &Dir);

// The listener among them whose environment says Variable=Value (its rank).
pid_t executorWhere(const std::string &Dir, const std::string &Variable, const std::string &Value);

// Waits, up to Timeout, until Dir holds no announcement and no executor
// announcing there is alive.
::testing::AssertionResult waitUntilAllGone(const std::string &Dir,
                                            std::chrono::milliseconds Timeout = EndTimeout);

// The same while a host reads pool:Dir, as a pool does: executors killed
// with SIGKILL leave files that only a reader can remove (their locks
// gone, it knows them to be stale).
::testing::AssertionResult waitUntilAllGoneForAHost(const std::string &Dir,
                                                    std::chrono::milliseconds Timeout);

class SlurmTest : public ::testing::Test {
protected:
  void SetUp() override;

  // Runs N executors (executorCommand) as job Name under srun, with
  // SrunArgs before them, in the background; waits for their N
  // announcements, and returns the job's id through Job.
  ::testing::AssertionResult startExecutors(unsigned N, BackgroundCommand &Srun,
                                            const std::string &Name, unsigned &Job,
                                            const std::vector<std::string> &SrunArgs = {});

  const std::string &announceDir() const { return AnnounceDir; }

  SlurmCluster Cluster;
  TokenFile Token;
  std::string AnnounceDir;
};

} // namespace catalyst::remote::test

#endif
