//===- Target.cpp - A session or a pool behind one handle -----------------===//

#include "Target.h"

using namespace llvm;

namespace catalyst::remote::capi {

Expected<std::shared_ptr<Target>> Target::open(StringRef Address, const OutputAllocator &Outputs) {
  auto T = std::make_shared<Target>();
  if (Pool::isPoolAddress(Address)) {
    PoolOptions Base;
    Base.Member.Outputs = Outputs;
    auto Opts = poolOptionsFromEnvironment(std::move(Base));
    if (!Opts)
      return Opts.takeError();
    auto P = Pool::open(Address, *Opts);
    if (!P)
      return P.takeError();
    T->Many = std::move(*P);
    return T;
  }
  SessionOptions Base;
  Base.Outputs = Outputs;
  auto Opts = optionsFromEnvironment(std::move(Base));
  if (!Opts)
    return Opts.takeError();
  auto S = Session::open(Address, *Opts);
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
      common(P.Members, [](const PoolMemberStats &M) { return strategyName(M.Transfer); });
  Out.Transport = common(
      P.Members, [](const PoolMemberStats &M) { return transportName(M.Session.Transport); });
  return Out;
}

} // namespace catalyst::remote::capi
