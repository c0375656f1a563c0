//===- SlurmCluster.h - A Slurm cluster on this machine for one test -*- C++ -*-===//
//
// A single-machine Slurm cluster (22.05) with all its state in a temporary
// folder: its own munged (key, socket, seed), a slurm.conf on ports free at
// start, slurmctld and one slurmd per virtual node, all on 127.0.0.1, run
// as root without cgroups. Tests run srun, sbatch and scancel against it
// as users do, through clientEnvironment() (SLURM_CONF and a tag).
//
//   SlurmCluster Cluster;
//   if (std::string P = SlurmCluster::missingPackage(); !P.empty())
//     GTEST_SKIP() << "needs the Debian package " << P;
//   ASSERT_TRUE(Cluster.start());
//   CommandResult R = Cluster.srun({"-n", "4", "hostname"});
//   unsigned Job = Cluster.sbatch("#!/bin/sh\nexec srun ...\n");
//   ASSERT_TRUE(Cluster.waitForJobState(Job, {"RUNNING"}, 30s));
//
// Every client command is bounded by a timeout: a job asking for more than
// the cluster has stays pending for ever. The destructor tears everything
// down: jobs cancelled, daemons sent SIGTERM and, past a deadline,
// SIGKILL, and then every process still carrying the cluster's tag in its
// environment (step daemons, tasks: they outlive slurmd) killed, so that
// nothing of the cluster outlives the test; a reaper process does the
// same when the test is killed before its destructor runs. Not
// thread-safe: one test thread owns it.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_SLURMCLUSTER_H
#define CATALYST_REMOTE_TESTS_SLURMCLUSTER_H

#include "BackgroundCommand.h"
#include "Command.h"
#include "TempDir.h"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

namespace catalyst::remote::test {

class SlurmCluster {
public:
  struct Options {
    // Virtual nodes n1..nN, each claiming Cpus CPUs whatever the machine
    // has (SlurmdParameters=config_overrides). Heterogeneous jobs need two.
    unsigned Nodes = 3;
    unsigned Cpus = 4;
    // How long the daemons have to come up, and each client command to
    // answer.
    std::chrono::milliseconds StartTimeout = std::chrono::seconds(30);
    std::chrono::milliseconds CommandTimeout = std::chrono::seconds(30);
  };

  explicit SlurmCluster(Options O);
  SlurmCluster() : SlurmCluster(Options()) {}
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster &) = delete;
  SlurmCluster &operator=(const SlurmCluster &) = delete;

  // The Debian package that provides the first program this needs that is
  // missing here (munge, slurmctld, slurmd, slurm-client), or "".
  static std::string missingPackage();

  // Starts munged, slurmctld and the slurmds, and waits until every node
  // is idle. On failure says what did not come up, with its log's tail.
  ::testing::AssertionResult start();

  // Runs a client program (srun, sbatch, squeue, scontrol, scancel) with
  // Args against this cluster, within Options::CommandTimeout.
  CommandResult run(const std::string &Program, const std::vector<std::string> &Args) const;
  CommandResult srun(const std::vector<std::string> &Args) const { return run("srun", Args); }

  // Starts srun with Args in the background (a job of its own, or a step
  // of one given by --jobid), its output in Output.
  ::testing::AssertionResult srunInBackground(BackgroundCommand &Srun,
                                              const std::vector<std::string> &Args,
                                              const std::string &Output) const;

  // Writes Script to a file and submits it (sbatch --parsable, working in
  // the cluster's folder); the job's id, or 0 with a failure reported.
  unsigned sbatch(const std::string &Script, const std::vector<std::string> &Args = {}) const;

  // The job's state as scontrol tells it (RUNNING, PENDING, COMPLETED,
  // CANCELLED, ...); "" when it does not know the job.
  std::string jobState(unsigned Job) const;
  // Waits until the job's state is one of States.
  ::testing::AssertionResult waitForJobState(unsigned Job, const std::vector<std::string> &States,
                                             std::chrono::milliseconds Timeout) const;
  // Waits until the job has ended (neither pending, configuring, running,
  // nor completing).
  ::testing::AssertionResult waitForJobEnd(unsigned Job, std::chrono::milliseconds Timeout) const;
  // The id of the job named Name (squeue), or 0.
  unsigned jobNamed(const std::string &Name) const;
  CommandResult scancel(unsigned Job) const;

  // NAME=VALUE entries a client program needs: SLURM_CONF and the tag.
  const std::vector<std::string> &clientEnvironment() const { return ClientEnv; }
  // The cluster's folder (world-searchable, for munge's socket): job
  // scripts and their output go here.
  const std::string &dir() const { return Dir.dir(); }
  std::string path(const std::string &Name) const { return Dir.path(Name); }
  const Options &options() const { return Opts; }

private:
  ::testing::AssertionResult prepare();
  ::testing::AssertionResult startReaper();
  ::testing::AssertionResult startMunge();
  // Writes slurm.conf with fresh ports and starts slurmctld and slurmd.
  ::testing::AssertionResult startSlurm();
  ::testing::AssertionResult waitForIdleNodes();
  void stopSlurm();
  std::string writeConfig() const;
  std::string daemonLogs() const;
  void stop();
  void killTagged();

  Options Opts;
  TempDir Dir;
  std::string Tag;
  std::vector<std::string> ClientEnv;
  std::unique_ptr<BackgroundCommand> Reaper, Munged, Controller;
  std::vector<std::unique_ptr<BackgroundCommand>> Nodes;
  mutable unsigned Scripts = 0; // job scripts written, which names the next
};

} // namespace catalyst::remote::test

#endif
