//===- AuthBench.cpp - What authentication costs ---------------------------===//
//
// Authentication runs once per session, before the EPC: it should add one
// round trip (and two HMACs) to opening a session and nothing to a launch.
// Both are measured against an executor of the benchmark's own started with
// --token-file and --wire plain (what TLS adds is WireBench.cpp's), next to
// the executor without a token, interleaved:
//
//   auth/open            open (and close) a zerocopy session, authenticated
//                        and not; added_us over raw_rtt_us, the raw 8 B
//                        ping-pong of the same run, is the round trips added
//   auth/launch/8B       an 8 B zerocopy launch on an authenticated session
//                        against the same on a plain one: ratio_to_plain
//   liveness/launch/8B   the same on a session with heartbeats and a reply
//                        timeout (the default) against one without
//                        (LivenessTimeout 0): what liveness costs a launch
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "BenchToken.h"

#include <cstdlib>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

// The authenticated executor, started on first use and kept for the run.
struct Guarded {
  std::unique_ptr<BenchToken> Token;
  std::unique_ptr<tools::ListeningChild> Executor;
};

Expected<Guarded *> guarded(BenchEnv &Env) {
  static Guarded G;
  if (G.Executor)
    return &G;
  if (!Env.Given.empty())
    return createStringError(inconvertibleErrorCode(),
                             "needs executors of its own (CATALYST_REMOTE_ADDRESS is set)");
  auto Token = BenchToken::make();
  if (!Token)
    return Token.takeError();
  G.Token = std::move(*Token);
  auto P = startLocalExecutor(Env, {"--token-file", G.Token->path(), "--wire", "plain"});
  if (!P)
    return P.takeError();
  G.Executor = std::move(*P);
  return &G;
}

// Over TCP, as the plain session compared (which would otherwise move to
// the local socket and shared memory), and plain after the handshake, as
// the executor.
SessionOptions zeroCopy(const SecretBytes &Secret = {}) {
  SessionOptions O;
  O.Outputs = OutputAllocator{std::malloc, std::free};
  O.Strategy = Strategy::ZeroCopy;
  O.Transport = TransportKind::Tcp;
  O.Secret = Secret;
  O.Wire = WireProtection::Plain;
  return O;
}

void runOpen(benchmark::State &State, BenchEnv &Env) {
  auto G = guarded(Env);
  if (!G)
    return skip(State, toString(G.takeError()));
  auto Link = Env.Peer->connect(8, 8);
  if (!Link)
    return fail(State, Link.takeError());
  std::vector<double> Plain, Auth, Raw;
  char Byte[8] = {};
  for (auto _ : State) {
    auto P = openClose(Env.Address, zeroCopy());
    auto A = openClose((*G)->Executor->address(), zeroCopy((*G)->Token->secret()));
    if (!P || !A)
      return fail(State, joinErrors(P.takeError(), A.takeError()));
    auto Start = Clock::now();
    if (auto Err = (*Link)->exchange(Byte))
      return fail(State, std::move(Err));
    Raw.push_back(secondsSince(Start));
    Plain.push_back(*P);
    Auth.push_back(*A);
    State.SetIterationTime(*A);
  }
  double AddedUs = (median(Auth) - median(Plain)) * 1e6, RttUs = median(Raw) * 1e6;
  State.counters["plain_us"] = median(Plain) * 1e6;
  State.counters["authenticated_us"] = median(Auth) * 1e6;
  State.counters["added_us"] = AddedUs;
  State.counters["raw_rtt_us"] = RttUs;
  State.counters["added_round_trips"] = AddedUs / RttUs;
}

void runLaunch(benchmark::State &State, BenchEnv &Env) {
  auto G = guarded(Env);
  if (!G)
    return skip(State, toString(G.takeError()));
  auto Auth = Session::open((*G)->Executor->address(), zeroCopy((*G)->Token->secret()));
  if (!Auth)
    return fail(State, Auth.takeError());
  if (auto Err = (*Auth)->sendBinary(ForwardKernel, BinaryFormat::Object))
    return fail(State, std::move(Err));
  compareLaunches(State, *Env.Sessions.at(Strategy::ZeroCopy), **Auth, "authenticated_us");
}

// Without heartbeats: a session that asks for none, on the same executor.
void runUnwatched(benchmark::State &State, BenchEnv &Env) {
  SessionOptions O = zeroCopy();
  O.LivenessTimeout = std::chrono::milliseconds(0);
  auto Unwatched = Session::open(Env.Address, O);
  if (!Unwatched)
    return fail(State, Unwatched.takeError());
  if (auto Err = (*Unwatched)->sendBinary(ForwardKernel, BinaryFormat::Object))
    return fail(State, std::move(Err));
  compareLaunches(State, **Unwatched, *Env.Sessions.at(Strategy::ZeroCopy), "liveness_us");
}

} // namespace

Expected<double> openClose(const std::string &Address, const SessionOptions &O) {
  auto Start = Clock::now();
  auto S = Session::open(Address, O);
  if (!S)
    return S.takeError();
  double Took = secondsSince(Start);
  if (auto Err = (*S)->close())
    return Err;
  return Took;
}

void registerAuthBenchmarks(BenchEnv &Env) {
  benchmark::RegisterBenchmark("auth/open", [&Env](benchmark::State &S) { runOpen(S, Env); })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(100);
  benchmark::RegisterBenchmark("auth/launch/8B", [&Env](benchmark::State &S) { runLaunch(S, Env); })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(1000);
  benchmark::RegisterBenchmark("liveness/launch/8B",
                               [&Env](benchmark::State &S) { runUnwatched(S, Env); })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(1000);
}

} // namespace catalyst::remote::bench
