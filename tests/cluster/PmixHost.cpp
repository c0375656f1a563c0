//===- PmixHost.cpp - A host that finds its executors through PMIx --------===//
//
// The first application of an MPMD job (tests/cluster/PmixTest.cpp starts
// it): `mpirun -n 1 catalyst_remote_pmix_host N SECONDS : -n N
// catalyst-remote-executor ... --announce pmix`. Opens pool:pmix, waiting
// up to SECONDS for N members, sends sleepy.o to the pool and runs 4N
// asynchronous launches on it, each checked for its own result. Prints the
// pool's size and one line per member ("rank R at ADDRESS: launch right"
// when every launch it ran was right), and exits 0 when every launch was
// right and every member ran some, else 1 saying why.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Memref.h"
#include "catalyst/remote/Pool.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

int fail(const std::string &Why) {
  llvm::errs() << "pmix host: " << Why << "\n";
  return 1;
}

// One sleepy launch: sleeps Ms and returns it.
struct Sleepy {
  explicit Sleepy(int64_t Ms) : Ms(Ms), In(makeDenseInput({1}, std::vector<int64_t>{Ms})) {
    Out.poison();
  }
  ~Sleepy() { std::free(Out.allocated()); }
  bool right() const { return as<int64_t>(Out.values()) == std::vector<int64_t>{Ms}; }

  int64_t Ms;
  std::unique_ptr<Input> In;
  Desc Out{1, 8};
  MemrefArg Args[1] = {{In->D.data(), 1, 8}}, Outs[1] = {{Out.data(), 1, 8}};
};

} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 3)
    return fail("usage: catalyst_remote_pmix_host MEMBERS SECONDS");
  size_t Want = std::strtoul(Argv[1], nullptr, 10);
  PoolOptions O;
  O.MinMembers = Want;
  O.Member.HandshakeTimeout = std::chrono::seconds(std::atoi(Argv[2]));
  auto P = Pool::open("pool:pmix", O);
  if (!P)
    return fail(llvm::toString(P.takeError()));
  llvm::outs() << "pmix host: pool:pmix: " << (*P)->members() << " members\n";
  if (auto Err = (*P)->sendBinary(kernelObject("sleepy"), BinaryFormat::Object))
    return fail(llvm::toString(std::move(Err)));
  std::vector<std::unique_ptr<Sleepy>> Launches;
  std::vector<uint64_t> Tickets;
  for (size_t I = 0; I < 4 * Want; ++I) {
    Launches.push_back(std::make_unique<Sleepy>(int64_t(20 + I)));
    Sleepy &L = *Launches.back();
    Tickets.push_back((*P)->launchAsync({remoteEntry("sleepy"), "sleepy.o", L.Args, L.Outs}));
  }
  size_t Wrong = 0;
  for (size_t I = 0; I < Tickets.size(); ++I)
    if (auto Err = (*P)->await(Tickets[I]))
      Wrong += bool(fail(llvm::toString(std::move(Err))));
    else
      Wrong += !Launches[I]->right();
  PoolStats S = (*P)->stats();
  size_t Idle = 0;
  for (const PoolMemberStats &M : S.Members) {
    bool Ran = M.Session.Launches > 0;
    Idle += !Ran;
    llvm::outs() << "pmix host: " << M.Name << " at " << M.Address << ": "
                 << (Ran && !Wrong ? "launch right" : "no launch right") << "\n";
  }
  llvm::outs().flush();
  if (auto Err = (*P)->close())
    return fail(llvm::toString(std::move(Err)));
  return Wrong || Idle || S.Members.size() != Want ? 1 : 0;
}
