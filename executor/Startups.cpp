//===- Startups.cpp - Peers that have not authenticated yet ---------------===//

#include "Startups.h"

#include "wire/Handshake.h"

#include "llvm/ADT/SmallVector.h"

using namespace llvm;

namespace catalyst::remote::executor {

namespace {

Error badLimits(StringRef Text, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "bad --max-startups '" + Text + "': " + Why);
}

} // namespace

Error StartupLimits::parse(StringRef Text, StartupLimits &L) {
  SmallVector<StringRef, 3> Parts;
  Text.split(Parts, ':');
  if (Parts.size() != 1 && Parts.size() != 3)
    return badLimits(Text, "expected START:RATE:FULL or FULL");
  unsigned V[3];
  for (size_t I = 0; I < Parts.size(); ++I)
    if (Parts[I].getAsInteger(10, V[I]) || V[I] > (1u << 20))
      return badLimits(Text, "'" + Parts[I] + "' is not a count");
  if (Parts.size() == 1)
    V[1] = 100, V[2] = V[0];
  if (V[2] == 0)
    return badLimits(Text, "FULL must be at least 1");
  if (V[0] > V[2] || V[1] > 100)
    return badLimits(Text, "needs START <= FULL and RATE <= 100");
  L.Start = V[0];
  L.RatePercent = V[1];
  L.Full = V[2];
  return Error::success();
}

StartupLimits StartupLimits::defaultsFor(bool Token) {
  StartupLimits L;
  if (!Token) {
    L.Start = 10;
    L.Full = 100;
  }
  return L;
}

Startups::Startups(const StartupLimits &L, uint64_t Seed) : Limits(L), Random(Seed) {}

Startups::Verdict Startups::admit(const std::string &Source) {
  if (Total >= Limits.Full)
    return Verdict::Full;
  auto It = PerSource.find(Source);
  if ((It == PerSource.end() ? 0 : It->second) >= Limits.PerSource)
    return Verdict::SourceFull;
  if (Total >= Limits.Start) {
    // Rate% at Start, rising linearly to 100% at Full.
    double Span = double(Limits.Full - Limits.Start);
    double P = Limits.RatePercent / 100.0 +
               (1 - Limits.RatePercent / 100.0) * double(Total - Limits.Start) / Span;
    if (std::uniform_real_distribution<double>(0, 1)(Random) < P)
      return Verdict::EarlyDrop;
  }
  ++PerSource[Source];
  ++Total;
  return Verdict::Admit;
}

void Startups::done(const std::string &Source) {
  auto It = PerSource.find(Source);
  if (It == PerSource.end())
    return;
  --Total;
  if (--It->second == 0)
    PerSource.erase(It);
}

std::string busyReason(Startups::Verdict V) {
  const char *Why = V == Startups::Verdict::SourceFull
                        ? "too many connections from this address have not authenticated yet "
                          "(--max-startups-per-source); try again"
                        : "too many connections have not authenticated yet (--max-startups); "
                          "try again";
  return (wire::BusyRefusal + Why).str();
}

} // namespace catalyst::remote::executor
