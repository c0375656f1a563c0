//===- RefusalLog.cpp - Refused peers, logged at a bounded rate -----------===//

#include "RefusalLog.h"

#include "Log.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace catalyst::remote::executor {

namespace {

const char *const KindNames[RefusalLog::Kinds] = {
    "left before authenticating",
    "silent past the handshake deadline",
    "sent something other than the handshake",
    "did not know the secret",
    "over the budget of peers not yet authenticated",
    "over --max-connections",
    "of another user on a socket file",
    "failed on the executor's side",
    "wanted other wire protection (--wire)",
};

std::string seconds(std::chrono::milliseconds D) {
  char Text[32];
  std::snprintf(Text, sizeof(Text), "%.3g", D.count() / 1000.0);
  return Text;
}

} // namespace

void RefusalLog::note(Kind K, const std::string &Source, const std::string &Line,
                      Clock::time_point Now) {
  flush(Now);
  if (!LoggedOne) {
    LoggedOne = true;
    LogLine() << "catalyst-remote-executor: " << Line << " (further refusals within "
              << seconds(Interval) << " s are summarized)";
    return;
  }
  ++Unlogged;
  ++Counts[size_t(K)];
  if (BySource.size() < MaxSources || BySource.count(Source))
    ++BySource[Source];
  else
    ++BySource["other addresses"];
}

RefusalLog::Clock::time_point RefusalLog::flush(Clock::time_point Now) {
  if (Now - Began < Interval)
    return Began + Interval;
  if (Unlogged > 0) {
    LogLine Out;
    Out << "catalyst-remote-executor: refused " << Unlogged << " more peers in the last "
        << seconds(std::chrono::duration_cast<std::chrono::milliseconds>(Now - Began)) << " s:";
    const char *Sep = " ";
    for (size_t I = 0; I < Kinds; ++I)
      if (Counts[I]) {
        Out << Sep << Counts[I] << " " << KindNames[I];
        Sep = ", ";
      }
    std::vector<std::pair<uint64_t, std::string>> Top;
    for (auto &[Source, N] : BySource)
      Top.push_back({N, Source});
    size_t Shown = std::min(Top.size(), TopSources);
    std::partial_sort(Top.begin(), Top.begin() + Shown, Top.end(),
                      [](auto &A, auto &B) { return A.first > B.first; });
    Out << "; most from";
    for (size_t I = 0; I < Shown; ++I)
      Out << (I ? ", " : " ") << Top[I].second << " (" << Top[I].first << ")";
    if (Top.size() > Shown)
      Out << " and " << Top.size() - Shown << " more addresses";
  }
  Began = Now;
  LoggedOne = false;
  Unlogged = 0;
  Counts = {};
  BySource.clear();
  return Began + Interval;
}

} // namespace catalyst::remote::executor
