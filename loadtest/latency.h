// Latency summaries shared by the load tools: nearest-rank percentiles.
#ifndef WSCHED_LOADTEST_LATENCY_H_
#define WSCHED_LOADTEST_LATENCY_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace wsched::loadtest {

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles of nanosecond samples, in milliseconds.
inline Percentiles Summarize(std::vector<int64_t>& ns) {
  Percentiles p;
  if (ns.empty()) return p;
  std::sort(ns.begin(), ns.end());
  auto rank = [&](double q) {
    size_t index = static_cast<size_t>(std::ceil(q * static_cast<double>(ns.size())));
    return static_cast<double>(ns[std::clamp<size_t>(index, 1, ns.size()) - 1]) / 1e6;
  };
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.max = static_cast<double>(ns.back()) / 1e6;
  double sum = 0;
  for (int64_t v : ns) sum += static_cast<double>(v);
  p.mean = sum / static_cast<double>(ns.size()) / 1e6;
  return p;
}

}  // namespace wsched::loadtest

#endif  // WSCHED_LOADTEST_LATENCY_H_
