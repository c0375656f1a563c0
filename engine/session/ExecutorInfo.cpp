//===- ExecutorInfo.cpp - Reading what an executor announced --------------===//

#include "ExecutorInfo.h"

#include "../transfer/CheckedCall.h"
#include "wire/Protocol.h"

#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace llvm;
using namespace llvm::orc;

namespace catalyst::remote {

namespace {

// Tools print the version: nothing the executor sends may steer a terminal.
std::string printable(std::string Text) {
  constexpr size_t MaxVersion = 64;
  if (Text.size() > MaxVersion)
    Text.resize(MaxVersion);
  for (char &C : Text)
    if (C < 0x20 || C > 0x7e)
      C = '?';
  return Text;
}

} // namespace

bool hasSymbols(const ExecutorProcessControl &EPC, ArrayRef<const char *> Names) {
  const auto &Map = EPC.getBootstrapSymbolsMap();
  return llvm::all_of(Names, [&](const char *N) { return Map.count(N); });
}

ExecutorInfo describeExecutor(const ExecutorProcessControl &EPC, bool Authenticated) {
  ExecutorInfo I;
  I.Authenticated = Authenticated;
  I.Version = printable(
      bootstrapValue<wire::SPSVersionValue, std::string>(EPC, wire::VersionKey).value_or(""));
  bool Own = EPC.getBootstrapMap().count(wire::ProtocolKey);
  if (Own)
    I.Protocol =
        bootstrapValue<wire::SPSProtocolValue, uint32_t>(EPC, wire::ProtocolKey).value_or(0);
  bool CanBatch = Own && hasSymbols(EPC, {wire::BatchedInvokeName, wire::BatchedReleaseName});
  if (CanBatch && EPC.getBootstrapMap().count(wire::ZeroCopyKey))
    I.Strategies.push_back(Strategy::ZeroCopy);
  if (CanBatch)
    I.Strategies.push_back(Strategy::Batched);
  I.Strategies.push_back(Strategy::Naive);
  I.Heartbeats = hasSymbols(EPC, {wire::LivenessEnableName});
  I.WrapperErrors = hasSymbols(EPC, {wire::CallWrapperName});
  return I;
}

} // namespace catalyst::remote
