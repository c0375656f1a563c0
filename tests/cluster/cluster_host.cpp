//===- cluster_host.cpp - The host component of a heterogeneous job -------===//
//
// catalyst_remote_cluster_host DIR N
//
// Run by Slurm as the first component of a heterogeneous job whose second
// runs the executors: waits for N announcements in DIR, opens a session
// with each (the secret from CATALYST_REMOTE_TOKEN_FILE, as any host reads
// it), runs a concat launch on each and compares it with the local kernel.
// Prints one line per member and exits 0 when every launch was right, 1
// otherwise.
//
//===----------------------------------------------------------------------===//

#include "ClusterHarness.h"

#include <cstdio>
#include <cstdlib>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

int main(int Argc, char **Argv) {
  if (Argc != 3 || std::atoi(Argv[2]) <= 0) {
    std::fprintf(stderr, "usage: %s DIR N\n", Argv[0]);
    return 2;
  }
  std::string Dir = Argv[1];
  size_t N = size_t(std::atoi(Argv[2]));
  const char *TokenPath = std::getenv("CATALYST_REMOTE_TOKEN_FILE");
  if (!TokenPath) {
    std::fprintf(stderr, "host: CATALYST_REMOTE_TOKEN_FILE is not set\n");
    return 1;
  }
  std::vector<std::string> Names;
  if (auto R = waitForAnnouncements(Dir, N, Names); !R) {
    std::fprintf(stderr, "host: %s\n", R.message());
    return 1;
  }
  size_t Right = 0;
  for (const std::string &Name : Names) {
    std::string Address = announcedAddress(Dir, Name);
    auto R = servesSessions(Address, TokenPath);
    std::printf("host: member %s at %s: %s\n", Name.c_str(), Address.c_str(),
                R ? "right" : R.message());
    Right += bool(R);
  }
  std::printf("host: %zu of %zu members right\n", Right, N);
  return Right == N ? 0 : 1;
}
