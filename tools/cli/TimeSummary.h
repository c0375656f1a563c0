//===- TimeSummary.h - Median, 99th percentile, extremes --------*- C++ -*-===//

#ifndef CATALYST_REMOTE_CLI_TIMESUMMARY_H
#define CATALYST_REMOTE_CLI_TIMESUMMARY_H

#include <chrono>
#include <cstddef>
#include <vector>

namespace catalyst::remote::cli {

struct TimeSummary {
  size_t Count = 0;
  double MedianNs = 0, P99Ns = 0, MinNs = 0, MaxNs = 0; // a median may fall between two
};

// Of at least one sample. The percentile is the nearest rank: a sample that
// was measured, never an interpolation (with fewer than 100 samples it is
// the largest).
TimeSummary summarize(std::vector<std::chrono::nanoseconds> Samples);

} // namespace catalyst::remote::cli

#endif
