// A synthetic trace: a week (or `days`) of office-hours demand with bursts,
// for trying policies before a real trace exists and for the benchmark.
// loadtest/traces/README.md describes the model and how to regenerate the
// example trace committed there.
//
//  - Regular arrivals follow a diurnal curve in UTC: quiet at night (5% of
//    the peak), rising from 06:00, a peak 09:00-17:00 with a dip at lunch
//    (12:00-13:30, 70%), falling to 10% by 22:00. Saturday and Sunday run at
//    20% of a weekday.
//  - Bursts: on each weekday two moments between 09:00 and 16:00 (a course,
//    a hackathon) at which `burst_share` of all workspaces, split evenly,
//    arrive within ten minutes, all of `burst_class`.
//  - Classes follow `mix` (weights); orgs are Zipf-weighted (org-00 is the
//    busiest), three projects each.
//  - Durations are log-normal (sigma 0.8): median 45 min for CPU classes,
//    60 min for GPU classes (a class id starting with "gpu"), 90 min in a
//    burst; clamped to 2 min - 8 h.
//
// Deterministic: the same options give the same trace on every machine
// (a 64-bit Mersenne Twister and hand-written transforms, not the standard
// library's distributions, whose output differs between implementations).
#ifndef WSCHED_SERVER_SIMULATE_SYNTHETIC_H_
#define WSCHED_SERVER_SIMULATE_SYNTHETIC_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "server/simulate/workload.h"

namespace wsched::simulate {

struct SyntheticOptions {
  int64_t workspaces = 10'000;
  int days = 7;
  uint64_t seed = 1;
  // A Monday, 00:00 UTC.
  absl::Time start = absl::FromCivil(absl::CivilSecond(2026, 3, 2), absl::UTCTimeZone());
  // Class id -> weight; the default fits classes/saas.yaml.
  std::vector<std::pair<std::string, double>> mix = {
      {"standard", 0.40}, {"small", 0.15},  {"large", 0.10},    {"large-vm", 0.03},
      {"gpu-1x", 0.22},   {"gpu-2x", 0.08}, {"gpu-8x-vm", 0.02},
  };
  int orgs = 20;
  double burst_share = 0.08;
  std::string burst_class = "gpu-1x";
};

// Sorted by time. Empty for workspaces <= 0 or days <= 0.
std::vector<Arrival> SyntheticTrace(const SyntheticOptions& options);

// The trace as the simulator's CSV: time,org,project,class,duration_s.
std::string TraceCsv(const std::vector<Arrival>& trace);

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_SYNTHETIC_H_
