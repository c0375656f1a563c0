//===- Report.cpp - What a command found, as text or JSON -----------------===//

#include "Report.h"

#include "catalyst/remote/StatsJson.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

using namespace llvm;

namespace catalyst::remote::cli {

namespace {

std::string duration(double Ns) {
  double Us = Ns / 1000;
  if (Us < 1000)
    return formatv("{0:f1} us", Us);
  if (Us < 1000000)
    return formatv("{0:f2} ms", Us / 1000);
  return formatv("{0:f2} s", Us / 1000000);
}

int64_t whole(double V) {
  return int64_t(std::llround(V));
}

json::Object summary(const TimeSummary &S) {
  return json::Object{{"count", int64_t(S.Count)},
                      {"median", whole(S.MedianNs)},
                      {"p99", whole(S.P99Ns)},
                      {"min", whole(S.MinNs)},
                      {"max", whole(S.MaxNs)}};
}

std::vector<std::string> strategyNames(const std::vector<Strategy> &All) {
  std::vector<std::string> Names;
  for (Strategy S : All)
    Names.push_back(strategyName(S));
  return Names;
}

std::vector<std::string> extensions(const ExecutorInfo &E) {
  std::vector<std::string> Out;
  if (E.Heartbeats)
    Out.push_back("heartbeats");
  if (E.WrapperErrors)
    Out.push_back("wrapper errors");
  return Out;
}

std::string shapeText(ArrayRef<int64_t> Shape) {
  std::string Dims = join(map_range(Shape, [](int64_t D) { return std::to_string(D); }), ", ");
  return "(" + Dims + (Shape.size() == 1 ? ",)" : ")");
}

// Inputs and outputs moved over the median launch.
double bytesPerSecond(const RunReport &R) {
  return R.Launch.MedianNs > 0 ? R.PayloadBytes * 1e9 / R.Launch.MedianNs : 0;
}

void printPingJson(const PingReport &R, raw_ostream &OS) {
  json::Object Out = executorJson(R.Executor);
  Out.try_emplace("address", R.Address);
  Out.try_emplace("strategy", strategyName(R.Chosen));
  Out.try_emplace("transport", R.Transport);
  Out.try_emplace("protection", R.Protection);
  Out.try_emplace("connect_ns", whole(R.ConnectNs));
  Out.try_emplace("round_trip_ns", summary(R.RoundTrip));
  OS << formatv("{0}\n", json::Value(std::move(Out)));
}

void printRunJson(const RunReport &R, raw_ostream &OS) {
  json::Array Outputs;
  for (const OutputFile &F : R.Outputs) {
    json::Array Shape;
    for (int64_t D : F.Shape)
      Shape.push_back(D);
    Outputs.push_back(json::Object{{"path", F.Path},
                                   {"dtype", F.Type.Name},
                                   {"shape", std::move(Shape)},
                                   {"bytes", int64_t(F.Bytes)}});
  }
  OS << formatv("{0}\n", json::Value(json::Object{{"outputs", std::move(Outputs)},
                                                  {"strategy", strategyName(R.Chosen)},
                                                  {"launch_ns", summary(R.Launch)},
                                                  {"payload_bytes", int64_t(R.PayloadBytes)},
                                                  {"bytes_per_s", whole(bytesPerSecond(R))},
                                                  {"last_launch", launchStatsJson(R.Last)}}));
}

} // namespace

void printPing(const PingReport &R, bool Json, raw_ostream &OS) {
  if (Json)
    return printPingJson(R, OS);
  const ExecutorInfo &E = R.Executor;
  OS << "executor:       " << R.Address << ", ";
  if (E.Protocol == 0)
    OS << "Catalyst's upstream services only (no version announced)\n";
  else
    OS << "catalyst-remote-executor " << (E.Version.empty() ? "(version not announced)" : E.Version)
       << ", protocol " << E.Protocol << "\n";
  OS << "strategies:     " << join(strategyNames(E.Strategies), ", ") << " (launches use "
     << strategyName(R.Chosen) << ")\n";
  auto Ext = extensions(E);
  OS << "extensions:     " << (Ext.empty() ? "none" : join(Ext, ", ")) << "\n";
  OS << "authentication: "
     << (E.Authenticated ? "shared secret, proven by both ends" : "none (no secret asked)") << "\n";
  OS << "wire:           " << R.Protection << " over " << R.Transport
     << (R.Protection == "plain" && R.Transport == "tcp" && E.Authenticated
             ? " (authenticated, not encrypted: --wire plain)"
             : "")
     << "\n";
  OS << "connect:        " << duration(R.ConnectNs) << "\n";
  OS << formatv("round trip:     median {0}, p99 {1} over {2} ({3} to {4})\n",
                duration(R.RoundTrip.MedianNs), duration(R.RoundTrip.P99Ns), R.RoundTrip.Count,
                duration(R.RoundTrip.MinNs), duration(R.RoundTrip.MaxNs));
}

static void printPoolPingJson(const PoolPingReport &R, raw_ostream &OS) {
  json::Array Members;
  for (const auto &[Name, M] : R.Members)
    Members.push_back(json::Object{{"name", Name},
                                   {"address", M.Address},
                                   {"version", M.Executor.Version},
                                   {"strategy", strategyName(M.Chosen)},
                                   {"transport", M.Transport},
                                   {"protection", M.Protection},
                                   {"authenticated", M.Executor.Authenticated},
                                   {"round_trip_ns", summary(M.RoundTrip)}});
  json::Array Failures;
  for (const std::string &F : R.Failures)
    Failures.push_back(F);
  OS << formatv("{0}\n", json::Value(json::Object{{"address", R.Address},
                                                  {"connect_ns", whole(R.ConnectNs)},
                                                  {"members", std::move(Members)},
                                                  {"failures", std::move(Failures)}}));
}

void printPoolPing(const PoolPingReport &R, bool Json, raw_ostream &OS) {
  if (Json)
    return printPoolPingJson(R, OS);
  OS << "pool:           " << R.Address << ", " << R.Members.size() << " member"
     << (R.Members.size() == 1 ? "" : "s") << " (opened in " << duration(R.ConnectNs) << ")\n";
  for (const auto &[Name, M] : R.Members)
    OS << formatv("member {0}: {1}, {2} over {3}, {4}, {5}; round trip median {6}, p99 {7}\n", Name,
                  M.Address, strategyName(M.Chosen), M.Transport, M.Protection,
                  M.Executor.Authenticated ? "authenticated" : "no secret",
                  duration(M.RoundTrip.MedianNs), duration(M.RoundTrip.P99Ns));
  for (const std::string &F : R.Failures)
    OS << "failed:         " << F << "\n";
}

void printRun(const RunReport &R, bool Json, raw_ostream &OS) {
  if (Json)
    return printRunJson(R, OS);
  for (const OutputFile &F : R.Outputs)
    OS << formatv("{0}: {1} {2}, {3} bytes\n", F.Path, F.Type.Name, shapeText(F.Shape), F.Bytes);
  const TimeSummary &L = R.Launch;
  if (L.Count == 1)
    OS << formatv("launch ({0}): {1}", strategyName(R.Chosen), duration(L.MedianNs));
  else
    OS << formatv("{0} launches ({1}): median {2}, min {3}, max {4}", L.Count,
                  strategyName(R.Chosen), duration(L.MedianNs), duration(L.MinNs),
                  duration(L.MaxNs));
  OS << formatv(", {0:f3} GB/s of inputs and outputs\n", bytesPerSecond(R) / 1e9);
}

} // namespace catalyst::remote::cli
