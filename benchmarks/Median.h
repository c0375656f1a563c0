//===- Median.h - The statistic every benchmark here reports ----*- C++ -*-===//

#ifndef CATALYST_REMOTE_BENCH_MEDIAN_H
#define CATALYST_REMOTE_BENCH_MEDIAN_H

#include <algorithm>
#include <vector>

namespace catalyst::remote::bench {

// The median of Samples, taken by value because finding it reorders them.
inline double median(std::vector<double> Samples) {
  if (Samples.empty())
    return 0;
  size_t Mid = Samples.size() / 2;
  std::nth_element(Samples.begin(), Samples.begin() + Mid, Samples.end());
  double Upper = Samples[Mid];
  if (Samples.size() % 2)
    return Upper;
  double Lower = *std::max_element(Samples.begin(), Samples.begin() + Mid);
  return (Lower + Upper) / 2;
}

} // namespace catalyst::remote::bench

#endif
