//===- StatsJson.cpp - Counters and executor facts as JSON ----------------===//

#include "catalyst/remote/StatsJson.h"

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace catalyst::remote {

static int64_t count(uint64_t V) {
  return static_cast<int64_t>(V);
}

Object launchStatsJson(const LaunchStats &S) {
  const PhaseTimes &P = S.Phases;
  return Object{{"round_trips", count(S.RoundTrips)},
                {"messages", count(S.Messages)},
                {"bytes_sent", count(S.BytesSent)},
                {"bytes_received", count(S.BytesReceived)},
                {"host_copy_bytes", count(S.HostCopyBytes)},
                {"executor_copy_bytes", count(S.ExecutorCopyBytes)},
                {"slab_in_use", count(S.SlabInUse)},
                {"slab_high_water", count(S.SlabHighWater)},
                {"outputs_ready", count(S.OutputsReady)},
                {"resident_bytes", count(S.ResidentBytes)},
                {"phases_ns", Object{{"plan", count(P.PlanNs)},
                                     {"send", count(P.SendNs)},
                                     {"copy_in", count(P.CopyInNs)},
                                     {"kernel", count(P.KernelNs)},
                                     {"copy_out", count(P.CopyOutNs)},
                                     {"receive", count(P.ReceiveNs)},
                                     {"rewrite", count(P.RewriteNs)}}}};
}

Object sessionStatsJson(const SessionStats &S) {
  const ResidentStats &R = S.Residents;
  return Object{{"launches", count(S.Launches)},
                {"last", launchStatsJson(S.Last)},
                {"total", launchStatsJson(S.Total)},
                {"residents", Object{{"uploads", count(R.Uploads)},
                                     {"uploaded_bytes", count(R.UploadedBytes)},
                                     {"fetches", count(R.Fetches)},
                                     {"fetched_bytes", count(R.FetchedBytes)},
                                     {"releases", count(R.Releases)},
                                     {"kept_outputs", count(R.KeptOutputs)},
                                     {"held", count(R.Held)},
                                     {"held_bytes", count(R.HeldBytes)}}}};
}

Object executorJson(const ExecutorInfo &E) {
  Array Strategies;
  for (Strategy S : E.Strategies)
    Strategies.push_back(strategyName(S));
  Array Extensions;
  if (E.Heartbeats)
    Extensions.push_back("heartbeats");
  if (E.WrapperErrors)
    Extensions.push_back("wrapper errors");
  return Object{{"version", E.Version.empty() ? Value(nullptr) : Value(E.Version)},
                {"protocol", count(E.Protocol)},
                {"strategies", std::move(Strategies)},
                {"extensions", std::move(Extensions)},
                {"authenticated", E.Authenticated}};
}

static Object memberJson(const PoolMemberStats &M) {
  Object Out = sessionStatsJson(M.Session);
  Out.try_emplace("name", M.Name);
  Out.try_emplace("address", M.Address);
  Out.try_emplace("healthy", M.Healthy);
  Out.try_emplace("dropped", M.Dropped.empty() ? Value(nullptr) : Value(M.Dropped));
  Out.try_emplace("running", count(M.Running));
  Out.try_emplace("strategy", strategyName(M.Strategy));
  Out.try_emplace("transport", transportName(M.Session.Transport));
  return Out;
}

Object poolStatsJson(const PoolStats &S) {
  Array Members;
  for (const PoolMemberStats &M : S.Members)
    Members.push_back(memberJson(M));
  return Object{{"launches", count(S.Launches)},        {"retried", count(S.Retried)},
                {"members_lost", count(S.MembersLost)}, {"last", launchStatsJson(S.Last)},
                {"total", launchStatsJson(S.Total)},    {"members", std::move(Members)}};
}

} // namespace catalyst::remote
