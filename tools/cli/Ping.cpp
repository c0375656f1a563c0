//===- Ping.cpp - catalyst-remote ping ------------------------------------===//

#include "Args.h"
#include "Commands.h"
#include "Report.h"
#include "catalyst/remote/Pool.h"
#include "catalyst/remote/Session.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <mutex>

using namespace llvm;

namespace catalyst::remote::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct PingOptions {
  unsigned Count = 10;
  bool Json = false;
  SessionOptions Session;
};

Command describe(PingOptions &O) {
  return {"ping",
          "ADDR [--count N] [--json]",
          "Connects to the executor at ADDR (HOST:PORT, [IPV6]:PORT, unix:PATH), says what\n"
          "it offers (its version, transfer strategies, extensions, whether both ends\n"
          "proved a shared secret) and times N round trips that do nothing on the executor.\n"
          "With a pool address (pool:DIR, pool:pmix, pool:ADDR,ADDR,...), does so for every\n"
          "member that joins within the handshake timeout, one after another.\n"
          "The secret comes from CATALYST_REMOTE_TOKEN_FILE or CATALYST_REMOTE_TOKEN, as for\n"
          "every host.",
          {"ADDR"},
          {{"--count", "N", "round trips to time (default 10)", setCount(O.Count, 1000000)},
           {"--json", nullptr, "print one JSON object instead of text", setFlag(O.Json)}}};
}

double nsSince(Clock::time_point T) {
  return std::chrono::duration<double, std::nano>(Clock::now() - T).count();
}

// Count round trips on S, each timed.
Expected<TimeSummary> timeTrips(Session &S, unsigned Count) {
  std::vector<std::chrono::nanoseconds> Trips;
  for (unsigned I = 0; I < Count; ++I) {
    auto Sent = Clock::now();
    if (auto Err = S.ping())
      return Err;
    Trips.push_back(Clock::now() - Sent);
  }
  return summarize(std::move(Trips));
}

Error pingPool(StringRef Address, const PingOptions &O) {
  PoolPingReport R;
  R.Address = Address.str();
  PoolOptions PO;
  PO.Member = O.Session;
  auto Began = Clock::now();
  auto P = Pool::open(Address, PO);
  if (!P)
    return P.takeError();
  R.ConnectNs = nsSince(Began);
  std::mutex M;
  (*P)->forEachMember([&](StringRef Name, StringRef Member, Session &S) {
    PingReport One;
    One.Address = Member.str();
    One.Executor = S.executor();
    One.Chosen = S.strategy();
    One.Protection = S.protection();
    One.Transport = transportName(S.transport());
    // One member at a time: round trips timed side by side on the same
    // cores would time the contention.
    std::lock_guard<std::mutex> L(M);
    auto Trips = timeTrips(S, O.Count);
    if (!Trips)
      R.Failures.push_back(Name.str() + ": " + toString(Trips.takeError()));
    else {
      One.RoundTrip = *Trips;
      R.Members.push_back({Name.str(), std::move(One)});
    }
  });
  llvm::sort(R.Members, [](const auto &A, const auto &B) { return A.first < B.first; });
  if (auto Err = (*P)->close())
    return Err;
  printPoolPing(R, O.Json, outs());
  return Error::success();
}

} // namespace

Error ping(ArrayRef<StringRef> Args) {
  PingOptions O;
  auto Operands = beginCommand(describe(O), Args, O.Session);
  if (!Operands || !*Operands)
    return Operands.takeError(); // success when it printed the help
  if (Pool::isPoolAddress((**Operands)[0]))
    return pingPool((**Operands)[0], O);
  PingReport R;
  R.Address = (**Operands)[0];
  auto Began = Clock::now();
  auto S = Session::open(R.Address, O.Session);
  if (!S)
    return S.takeError();
  R.ConnectNs = nsSince(Began);
  R.Executor = (*S)->executor();
  R.Chosen = (*S)->strategy();
  R.Protection = (*S)->protection();
  R.Transport = transportName((*S)->transport());
  auto Trips = timeTrips(**S, O.Count);
  if (!Trips)
    return Trips.takeError();
  R.RoundTrip = *Trips;
  if (auto Err = (*S)->close())
    return Err;
  printPing(R, O.Json, outs());
  return Error::success();
}

} // namespace catalyst::remote::cli
