//===- Ping.cpp - catalyst-remote ping ------------------------------------===//

#include "Args.h"
#include "Commands.h"
#include "Report.h"
#include "catalyst/remote/Session.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>

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
          "The secret comes from CATALYST_REMOTE_TOKEN_FILE or CATALYST_REMOTE_TOKEN, as for\n"
          "every host.",
          {"ADDR"},
          {{"--count", "N", "round trips to time (default 10)", setCount(O.Count, 1000000)},
           {"--json", nullptr, "print one JSON object instead of text", setFlag(O.Json)}}};
}

double nsSince(Clock::time_point T) {
  return std::chrono::duration<double, std::nano>(Clock::now() - T).count();
}

} // namespace

Error ping(ArrayRef<StringRef> Args) {
  PingOptions O;
  auto Operands = beginCommand(describe(O), Args, O.Session);
  if (!Operands || !*Operands)
    return Operands.takeError(); // success when it printed the help
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
  std::vector<std::chrono::nanoseconds> Trips;
  for (unsigned I = 0; I < O.Count; ++I) {
    auto Sent = Clock::now();
    if (auto Err = (*S)->ping())
      return Err;
    Trips.push_back(Clock::now() - Sent);
  }
  R.RoundTrip = summarize(std::move(Trips));
  if (auto Err = (*S)->close())
    return Err;
  printPing(R, O.Json, outs());
  return Error::success();
}

} // namespace catalyst::remote::cli
