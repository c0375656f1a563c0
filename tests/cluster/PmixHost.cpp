//===- PmixHost.cpp - A host that finds its executors through PMIx --------===//
//
// The first application of an MPMD job (tests/cluster/PmixTest.cpp starts
// it): `mpirun -n 1 catalyst_remote_pmix_host N SECONDS : -n N
// catalyst-remote-executor ... --announce pmix`. Waits up to SECONDS for
// N members through pmixSource(), then opens a session with each, sends
// sleepy.o and checks one launch on it. Prints one line per member and
// exits 0 when every one answered right, else 1 saying why.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Memref.h"
#include "catalyst/remote/Session.h"
#include "pool/MemberSource.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <thread>

using namespace catalyst::remote;
using namespace catalyst::remote::test;

namespace {

using Clock = std::chrono::steady_clock;

int fail(const std::string &Why) {
  llvm::errs() << "pmix host: " << Why << "\n";
  return 1;
}

// Polls Source until it names Want members or Deadline passes.
llvm::Expected<std::vector<pool::Announced>> awaitMembers(pool::MemberSource &Source, size_t Want,
                                                          Clock::time_point Deadline) {
  for (;;) {
    auto Now = Source.poll();
    if (!Now || Now->size() >= Want || Clock::now() >= Deadline)
      return Now;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// One launch of sleepy for Ms on A's executor; "" when it returned Ms.
std::string checkMember(const pool::Announced &A, int64_t Ms) {
  auto S = Session::open(A.Address);
  if (!S)
    return llvm::toString(S.takeError());
  if (auto Err = (*S)->sendBinary(kernelObject("sleepy"), BinaryFormat::Object))
    return llvm::toString(std::move(Err));
  auto In = makeDenseInput({1}, std::vector<int64_t>{Ms});
  Desc Out(1, 8);
  Out.poison();
  if (auto Err = (*S)->launch(
          {remoteEntry("sleepy"), "sleepy.o", {{In->D.data(), 1, 8}}, {{Out.data(), 1, 8}}}))
    return llvm::toString(std::move(Err));
  std::vector<int64_t> Got = as<int64_t>(Out.values());
  std::free(Out.allocated());
  if (Got != std::vector<int64_t>{Ms})
    return "sleepy returned something else than " + std::to_string(Ms);
  return "";
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 3)
    return fail("usage: catalyst_remote_pmix_host MEMBERS SECONDS");
  size_t Want = std::strtoul(Argv[1], nullptr, 10);
  auto Deadline = Clock::now() + std::chrono::seconds(std::atoi(Argv[2]));
  auto Source = pool::pmixSource();
  if (!Source)
    return fail(llvm::toString(Source.takeError()));
  auto Members = awaitMembers(**Source, Want, Deadline);
  if (!Members)
    return fail(llvm::toString(Members.takeError()));
  llvm::outs() << "pmix host: " << (*Source)->describe() << ": " << Members->size() << " members\n";
  if (Members->size() != Want)
    return fail("found " + std::to_string(Members->size()) + " members, not " +
                std::to_string(Want));
  int Failed = 0;
  for (size_t I = 0; I < Members->size(); ++I) {
    const pool::Announced &A = (*Members)[I];
    std::string Err = checkMember(A, int64_t(10 + I));
    llvm::outs() << "pmix host: " << A.Name << " at " << A.Address << ": "
                 << (Err.empty() ? "launch right" : Err) << "\n";
    Failed += !Err.empty();
  }
  llvm::outs().flush();
  return Failed ? 1 : 0;
}
