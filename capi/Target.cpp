//===- Target.cpp - A session or a pool behind one handle -----------------===//

#include "Target.h"

#include "catalyst/remote/Failure.h"
#include "catalyst/remote/StatsJson.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace catalyst::remote::capi {

Expected<std::shared_ptr<Target>> Target::open(StringRef Address, const OutputAllocator &Outputs) {
  PoolOptions Base;
  Base.Member.Outputs = Outputs;
  if (Pool::isPoolAddress(Address)) {
    auto Opts = poolOptionsFromEnvironment(std::move(Base));
    if (!Opts)
      return Opts.takeError();
    return open(Address, *Opts);
  }
  auto Member = optionsFromEnvironment(std::move(Base.Member));
  if (!Member)
    return Member.takeError();
  Base.Member = std::move(*Member);
  return open(Address, Base);
}

Expected<std::shared_ptr<Target>> Target::open(StringRef Address, const PoolOptions &Opts) {
  auto T = std::make_shared<Target>();
  if (Pool::isPoolAddress(Address)) {
    auto P = Pool::open(Address, Opts);
    if (!P)
      return P.takeError();
    T->Many = std::move(*P);
    return T;
  }
  auto S = Session::open(Address, Opts.Member);
  if (!S)
    return S.takeError();
  T->One = std::move(*S);
  return T;
}

StringRef Target::address() const {
  return One ? One->address() : Many->address();
}

bool Target::connected() const {
  return One ? One->connected() : Many->connected();
}

Error Target::sendBinary(StringRef Path, BinaryFormat Format) {
  return One ? One->sendBinary(Path, Format) : Many->sendBinary(Path, Format);
}

Expected<std::vector<char>> Target::callWrapper(StringRef Symbol, ArrayRef<char> Args) {
  return One ? One->callWrapper(Symbol, Args) : Many->callWrapper(Symbol, Args);
}

Error Target::launch(const LaunchCall &Call) {
  return One ? One->launch(Call) : Many->launch(Call);
}

uint64_t Target::launchAsync(const LaunchCall &Call) {
  return One ? One->launchAsync(Call) : Many->launchAsync(Call);
}

Error Target::await(uint64_t Ticket) {
  return One ? One->await(Ticket) : Many->await(Ticket);
}

Expected<Resident> Target::upload(const MemrefArg &In) {
  return One ? One->upload(In) : Many->upload(In);
}

Error Target::fetch(const Resident &R, const MemrefArg &Out, MutableArrayRef<char> Into) {
  return One ? One->fetch(R, Out, Into) : Many->fetch(R, Out, Into);
}

Error Target::release(Resident &R) {
  return One ? One->release(R) : Many->release(R);
}

Error Target::startTrace(StringRef Path) {
  return One ? One->startTrace(Path) : Many->startTrace(Path);
}

Error Target::stopTrace() {
  return One ? One->stopTrace() : Many->stopTrace();
}

Error Target::close() {
  return One ? One->close() : Many->close();
}

// What every member says, or "mixed" when they differ.
template <typename Fn>
static const char *common(const std::vector<PoolMemberStats> &Members, Fn Name) {
  const char *Seen = "none";
  for (const PoolMemberStats &M : Members) {
    if (!M.Healthy)
      continue;
    const char *Own = Name(M);
    if (std::string_view(Seen) != "none" && std::string_view(Seen) != Own)
      return "mixed";
    Seen = Own;
  }
  return Seen;
}

TargetStats Target::stats() const {
  TargetStats Out;
  if (One) {
    SessionStats S = One->stats();
    Out = {S.Launches, S.Last, S.Total, strategyName(One->strategy()),
           transportName(One->transport())};
    return Out;
  }
  PoolStats P = Many->stats();
  Out.Launches = P.Launches;
  Out.Last = P.Last;
  Out.Total = P.Total;
  Out.Strategy =
      common(P.Members, [](const PoolMemberStats &M) { return strategyName(M.Strategy); });
  Out.Transport = common(
      P.Members, [](const PoolMemberStats &M) { return transportName(M.Session.Transport); });
  return Out;
}

std::string Target::describe() const {
  json::Object Out{{"address", address()}, {"connected", connected()}};
  if (One) {
    Out.try_emplace("kind", "session");
    Out.try_emplace("strategy", strategyName(One->strategy()));
    Out.try_emplace("transport", transportName(One->transport()));
    Out.try_emplace("protection", One->protection());
    Out.try_emplace("executor", executorJson(One->executor()));
    Out.try_emplace("stats", sessionStatsJson(One->stats()));
  } else {
    Out.try_emplace("kind", "pool");
    Out.try_emplace("stats", poolStatsJson(Many->stats()));
  }
  return formatv("{0}", json::Value(std::move(Out))).str();
}

} // namespace catalyst::remote::capi
