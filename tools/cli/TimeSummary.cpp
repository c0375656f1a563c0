//===- TimeSummary.cpp - Median, 99th percentile, extremes ----------------===//

#include "TimeSummary.h"

#include <algorithm>
#include <cassert>

namespace catalyst::remote::cli {

TimeSummary summarize(std::vector<std::chrono::nanoseconds> Samples) {
  assert(!Samples.empty() && "nothing to summarize");
  std::sort(Samples.begin(), Samples.end());
  auto Ns = [](std::chrono::nanoseconds D) { return double(D.count()); };
  size_t N = Samples.size();
  TimeSummary S;
  S.Count = N;
  S.MinNs = Ns(Samples.front());
  S.MaxNs = Ns(Samples.back());
  S.MedianNs = N % 2 ? Ns(Samples[N / 2]) : (Ns(Samples[N / 2 - 1]) + Ns(Samples[N / 2])) / 2;
  // Nearest rank: the ceil(0.99 N)-th smallest.
  size_t Rank = (99 * N + 99) / 100;
  S.P99Ns = Ns(Samples[Rank - 1]);
  return S;
}

} // namespace catalyst::remote::cli
