#include "server/simulate/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace wsched::simulate {
namespace {

// The diurnal curve: (hour of day, share of the peak), linear in between.
constexpr std::pair<double, double> kCurve[] = {
    {0, 0.05},  {6, 0.05}, {7, 0.3},  {8, 0.9},   {9, 1.0},  {12, 1.0},  {12.5, 0.7},
    {13.5, 1.0}, {17, 0.9}, {18, 0.5}, {20, 0.25}, {22, 0.1}, {24, 0.05},
};
constexpr double kWeekend = 0.2;

double CurveAt(double hour) {
  for (size_t i = 1; i < std::size(kCurve); ++i) {
    if (hour <= kCurve[i].first) {
      const auto& [h0, v0] = kCurve[i - 1];
      const auto& [h1, v1] = kCurve[i];
      return v0 + (v1 - v0) * (hour - h0) / (h1 - h0);
    }
  }
  return kCurve[std::size(kCurve) - 1].second;
}

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  // [0, 1), 53 bits.
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double Normal() {
    // Box-Muller; 1 - u keeps the log finite.
    double u = 1 - Uniform(), v = Uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
  }
  // Index drawn by the cumulative weights `cdf` (ascending, last = total).
  size_t Pick(const std::vector<double>& cdf) {
    double x = Uniform() * cdf.back();
    return std::min<size_t>(std::upper_bound(cdf.begin(), cdf.end(), x) - cdf.begin(),
                            cdf.size() - 1);
  }

 private:
  std::mt19937_64 engine_;
};

std::vector<double> Cumulative(const std::vector<double>& weights) {
  std::vector<double> cdf(weights.size());
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i) cdf[i] = total += std::max(0.0, weights[i]);
  return cdf;
}

absl::Duration LogNormal(Random& random, absl::Duration median) {
  absl::Duration d = median * std::exp(0.8 * random.Normal());
  return std::clamp(absl::Trunc(d, absl::Seconds(1)), absl::Minutes(2), absl::Hours(8));
}

bool IsGpuClass(const std::string& id) { return id.rfind("gpu", 0) == 0; }

}  // namespace

std::vector<Arrival> SyntheticTrace(const SyntheticOptions& options) {
  std::vector<Arrival> trace;
  if (options.workspaces <= 0 || options.days <= 0 || options.mix.empty()) return trace;
  Random random(options.seed);
  const int minutes = options.days * 24 * 60;
  std::vector<double> minute_weight(minutes);
  for (int m = 0; m < minutes; ++m) {
    absl::CivilDay day = absl::ToCivilDay(options.start + absl::Minutes(m), absl::UTCTimeZone());
    absl::Weekday weekday = absl::GetWeekday(day);
    bool weekend = weekday == absl::Weekday::saturday || weekday == absl::Weekday::sunday;
    minute_weight[m] = CurveAt((m % (24 * 60)) / 60.0) * (weekend ? kWeekend : 1);
  }
  const std::vector<double> minute_cdf = Cumulative(minute_weight);
  std::vector<double> class_weights, org_weights;
  for (const auto& [id, weight] : options.mix) class_weights.push_back(weight);
  for (int o = 0; o < std::max(1, options.orgs); ++o) org_weights.push_back(1.0 / (o + 1));
  const std::vector<double> class_cdf = Cumulative(class_weights);
  const std::vector<double> org_cdf = Cumulative(org_weights);

  auto add = [&](absl::Time at, const std::string& class_id, absl::Duration median) {
    size_t org = random.Pick(org_cdf);
    Arrival a;
    a.time = absl::UnixEpoch() + absl::Floor(at - absl::UnixEpoch(), absl::Seconds(1));
    a.org = absl::StrFormat("org-%02d", org);
    a.project = absl::StrFormat("org-%02d-p%d", org, static_cast<int>(random.Uniform() * 3));
    a.class_id = class_id;
    a.duration = LogNormal(random, median);
    trace.push_back(std::move(a));
  };

  // Bursts: two per weekday, burst_share of the total between them.
  std::vector<absl::Time> bursts;
  for (int d = 0; d < options.days; ++d) {
    absl::Time day = options.start + absl::Hours(24 * d);
    absl::Weekday weekday = absl::GetWeekday(absl::ToCivilDay(day, absl::UTCTimeZone()));
    if (weekday == absl::Weekday::saturday || weekday == absl::Weekday::sunday) continue;
    for (int b = 0; b < 2; ++b) {
      bursts.push_back(day + absl::Hours(9) + absl::Seconds(random.Uniform() * 7 * 3600));
    }
  }
  int64_t in_bursts =
      bursts.empty() ? 0 : static_cast<int64_t>(options.burst_share * options.workspaces);
  for (int64_t i = 0; i < in_bursts; ++i) {
    absl::Time at = bursts[i % bursts.size()] + absl::Seconds(random.Uniform() * 600);
    add(at, options.burst_class, absl::Minutes(90));
  }
  for (int64_t i = in_bursts; i < options.workspaces; ++i) {
    size_t minute = random.Pick(minute_cdf);
    absl::Time at = options.start + absl::Minutes(minute) + absl::Seconds(random.Uniform() * 60);
    const std::string& class_id = options.mix[random.Pick(class_cdf)].first;
    add(at, class_id, IsGpuClass(class_id) ? absl::Minutes(60) : absl::Minutes(45));
  }
  std::stable_sort(trace.begin(), trace.end(),
                   [](const Arrival& a, const Arrival& b) { return a.time < b.time; });
  for (size_t i = 0; i < trace.size(); ++i) {
    trace[i].id = absl::StrCat("w", i);
    trace[i].line = static_cast<int>(i) + 2;  // After the header.
  }
  return trace;
}

std::string TraceCsv(const std::vector<Arrival>& trace) {
  std::string csv = "time,org,project,class,duration_s\n";
  for (const Arrival& a : trace) {
    absl::StrAppend(&csv, absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", a.time, absl::UTCTimeZone()), ",",
                    a.org, ",", a.project, ",", a.class_id, ",",
                    absl::ToInt64Seconds(a.duration), "\n");
  }
  return csv;
}

}  // namespace wsched::simulate
