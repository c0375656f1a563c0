//===- cluster_host.cpp - The host component of a heterogeneous job -------===//
//
// catalyst_remote_cluster_host POOL N LAUNCHES
//
// Run by Slurm as the first component of a heterogeneous job whose second
// runs the executors: opens the pool POOL (pool:DIR), waiting for N
// members, with the secret from CATALYST_REMOTE_TOKEN_FILE as any host
// reads it, and runs LAUNCHES concat launches on it, each compared with
// the local kernel (poolLaunchesRight). Prints what it found and exits 0
// when every launch was right and every member ran some, 1 otherwise.
//
//===----------------------------------------------------------------------===//

#include "ClusterHarness.h"

#include <cstdio>
#include <cstdlib>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

int main(int Argc, char **Argv) {
  if (Argc != 4 || std::atoi(Argv[2]) <= 0 || std::atoi(Argv[3]) <= 0) {
    std::fprintf(stderr, "usage: %s POOL N LAUNCHES\n", Argv[0]);
    return 2;
  }
  PoolOptions Base;
  Base.MinMembers = size_t(std::atoi(Argv[2]));
  Base.Member.HandshakeTimeout = AnnounceTimeout;
  auto O = poolOptionsFromEnvironment(std::move(Base));
  if (!O) {
    std::fprintf(stderr, "host: %s\n", llvm::toString(O.takeError()).c_str());
    return 1;
  }
  auto P = Pool::open(Argv[1], *O);
  if (!P) {
    std::fprintf(stderr, "host: %s\n", llvm::toString(P.takeError()).c_str());
    return 1;
  }
  size_t Used = 0;
  auto R = poolLaunchesRight(**P, size_t(std::atoi(Argv[3])), Used);
  std::printf("host: %s; %zu of %zu members ran launches\n", R ? "every launch right" : R.message(),
              Used, (*P)->members());
  return R && Used == O->MinMembers ? 0 : 1;
}
