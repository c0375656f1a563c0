//===- EngineHarness.cpp - Driving the C++ session API from tests ---------===//

#include "EngineHarness.h"

#include "ExecutorProcess.h"
#include "Kernels.h"

#include <algorithm>
#include <cstdlib>

namespace catalyst::remote::test {

TransportKind testTransport() {
  const char *Asked = std::getenv("CATALYST_REMOTE_TEST_TRANSPORT");
  if (Asked && socketFileRun())
    return TransportKind::SocketFile;
  bool Tcp = Asked && std::string(Asked) == "tcp";
  return Tcp ? TransportKind::Tcp : TransportKind::Local;
}

SessionOptions forThisRun(SessionOptions O) {
  if (O.Transport == TransportKind::Auto && testTransport() != TransportKind::Local)
    O.Transport = TransportKind::Tcp;
  return O;
}

std::unique_ptr<Session> openSession(const std::string &Address, const SessionOptions &O) {
  auto S = Session::open(Address, forThisRun(O));
  if (!S) {
    ADD_FAILURE() << "open " << Address << ": " << llvm::toString(S.takeError());
    return nullptr;
  }
  return std::move(*S);
}

std::unique_ptr<Session> openWithConcat(const std::string &Address, Strategy S, SessionOptions O) {
  O.Strategy = S;
  auto Sess = openSession(Address, O);
  if (!Sess)
    return nullptr;
  EXPECT_EQ(Sess->strategy(), S);
  if (auto Err = Sess->sendBinary(kernelObject("concat"), BinaryFormat::Object)) {
    ADD_FAILURE() << llvm::toString(std::move(Err));
    return nullptr;
  }
  return Sess;
}

std::string errorText(llvm::Error Err) {
  EXPECT_TRUE(static_cast<bool>(Err)) << "expected an error";
  return Err ? llvm::toString(std::move(Err)) : "";
}

std::string messageOf(llvm::Error Err) {
  return Err ? llvm::toString(std::move(Err)) : "";
}

FailureReport failureOf(llvm::Error Err) {
  return Err ? reportFailure(std::move(Err)) : FailureReport{};
}

std::vector<std::unique_ptr<Input>> byteInputs(const std::vector<int64_t> &Lengths,
                                               std::mt19937_64 &Rng) {
  std::vector<std::unique_ptr<Input>> Ins;
  for (int64_t N : Lengths)
    Ins.push_back(makeInput(Layout::Dense, {N}, 1, Rng));
  return Ins;
}

::testing::AssertionResult concatMatches(Session &S,
                                         const std::vector<std::unique_ptr<Input>> &Ins) {
  std::string Name = "concat_" + std::to_string(Ins.size());
  std::vector<MemrefArg> Args;
  std::vector<void *> Av;
  for (const auto &In : Ins) {
    Args.push_back({In->D.data(), 1, 1});
    Av.push_back(In->D.data());
  }
  Desc Remote(1, 1), Local(1, 1);
  MemrefArg Out{Remote.data(), 1, 1};
  std::string Entry = remoteEntry(Name);
  if (auto Err = S.launch({Entry, "concat.o", Args, {Out}}))
    return ::testing::AssertionFailure() << Name << ": " << llvm::toString(std::move(Err));
  hostEntry("concat", Name)(Local.data(), Av.data());
  bool Same = Remote.sizes() == Local.sizes() && Remote.values() == Local.values();
  auto Dense = Remote.isDenseRowMajor();
  std::free(Remote.allocated());
  std::free(Local.allocated());
  if (!Dense)
    return Dense << " (" << Name << ")";
  if (!Same)
    return ::testing::AssertionFailure() << Name << ": output differs from the local kernel's";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult settle(Session &S) {
  return concatMatches(S, {});
}

uint64_t slabPlace(uint64_t Bytes) {
  return (std::max<uint64_t>(Bytes, 1) + 63) / 64 * 64;
}

uint64_t steadyTrips(Strategy S, uint64_t Inputs) {
  switch (S) {
  case Strategy::ZeroCopy:
    return 1;
  case Strategy::Batched:
    return 3;
  default:
    return 6 * Inputs + 2 + 7;
  }
}

const char *strategyTestName(Strategy S) {
  switch (S) {
  case Strategy::ZeroCopy:
    return "ZeroCopy";
  case Strategy::Batched:
    return "Batched";
  case Strategy::Naive:
    return "Naive";
  case Strategy::Auto:
    return "Auto";
  }
  return "?";
}

} // namespace catalyst::remote::test

void catalyst::remote::PrintTo(Strategy S, std::ostream *OS) {
  *OS << test::strategyTestName(S);
}

void catalyst::remote::PrintTo(FailureKind K, std::ostream *OS) {
  *OS << failureKindName(K);
}
