#include "server/simulate/simulation_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace wsched::simulate {
namespace {

constexpr const char* kTimeFormat = "%Y-%m-%dT%H:%M:%SZ";

bool Active(const PoolResult& pool) { return pool.workspaces > 0 || pool.node_hours > 0; }

std::string Fixed(double value, int decimals) { return absl::StrFormat("%.*f", decimals, value); }

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

// "33/35": queued workspaces placed within the p90 estimate the server
// would have given them, of those checked; "-" when none was queued.
std::string WithinP90Text(const PoolResult& p) {
  if (p.estimates_checked == 0) return "-";
  return absl::StrCat(p.estimates_within_p90, "/", p.estimates_checked);
}

double GpuHours(int64_t gpu_micros) {
  return static_cast<double>(gpu_micros) / static_cast<double>(core::kGpuMicrosPerGpuHour);
}

const char* ActionName(core::SpendingAction action) {
  return action == core::SpendingAction::kBlockAndStop ? "block_and_stop" : "block_new";
}

// "a month (UTC)", "a month (Europe/Berlin)", "a rolling 7d".
std::string PeriodText(const core::SpendingPeriod& period) {
  if (period.kind == core::SpendingPeriod::Kind::kRolling) {
    return absl::StrCat("per rolling ", absl::FormatDuration(period.rolling));
  }
  return absl::StrCat("per month (", period.time_zone, ")");
}

nlohmann::ordered_json BudgetJson(const BudgetResult& b) {
  return {
      {"org", b.org},
      {"gpu_hours_limit", GpuHours(b.limit_micros)},
      {"period", PeriodText(b.limit.period)},
      {"action", ActionName(b.limit.action)},
      {"most_spent_gpu_hours", GpuHours(b.most_spent)},
      {"refused", b.refused},
      {"held_back", b.held_back},
      {"stopped", b.stopped},
  };
}

nlohmann::ordered_json PoolJson(const PoolResult& p) {
  return {
      {"pool", p.pool},
      {"gpu", p.gpu},
      {"node_hours", p.node_hours},
      {"gpu_hours_paid", p.gpu_hours_paid},
      {"gpu_hours_used", p.gpu_hours_used},
      {"gpu_hours_stranded", p.gpu_hours_stranded},
      {"mig", p.mig},
      {"relayouts", p.relayouts},
      {"idle_share", p.idle_share},
      {"workspaces", p.workspaces},
      {"never_placed", p.never_placed},
      {"wait_p50_s", Seconds(p.wait_p50)},
      {"wait_p95_s", Seconds(p.wait_p95)},
      {"wait_max_s", Seconds(p.wait_max)},
      {"waited_long", p.waited_long},
      {"estimates_checked", p.estimates_checked},
      {"estimates_within_p90", p.estimates_within_p90},
      {"nodes_started", p.nodes_started},
      {"timings",
       {{"node_start_s", Seconds(p.timings.node_start)},
        {"node_start_source", p.timings.node_start_source},
        {"driver_install_s", Seconds(p.timings.driver_install)},
        {"driver_install_source", p.timings.driver_install_source},
        {"mig_relayout_s", Seconds(p.timings.mig_relayout)}}},
  };
}

}  // namespace

std::string WaitText(absl::Duration d) {
  if (d < absl::Milliseconds(500)) return "0s";
  return absl::FormatDuration(absl::Trunc(d + absl::Milliseconds(500), absl::Seconds(1)));
}

std::vector<std::vector<std::string>> ReportTable(const std::vector<VariantResult>& variants,
                                                  absl::Duration long_wait) {
  std::vector<std::vector<std::string>> rows = {
      {"VARIANT", "POOL", "NODE-H", "GPU-H-PAID", "GPU-H-USED", "IDLE", "GPU-H-STRANDED",
       "RELAYOUTS", "WAIT-P50", "WAIT-P95",
       "WAIT-MAX", absl::StrCat("WAITED>", WaitText(long_wait)), "NEVER-PLACED",
       "NODES-STARTED", "WORKSPACES", "WITHIN-P90"}};
  for (const VariantResult& v : variants) {
    for (const PoolResult& p : v.result.pools) {
      if (!Active(p)) continue;
      rows.push_back({v.name, p.pool, Fixed(p.node_hours, 1),
                      p.gpu ? Fixed(p.gpu_hours_paid, 1) : "-",
                      p.gpu ? Fixed(p.gpu_hours_used, 1) : "-",
                      absl::StrCat(Fixed(100 * p.idle_share, 1), "%"),
                      p.gpu ? Fixed(p.gpu_hours_stranded, 1) : "-",
                      p.mig ? absl::StrCat(p.relayouts) : "-", WaitText(p.wait_p50),
                      WaitText(p.wait_p95), WaitText(p.wait_max), absl::StrCat(p.waited_long),
                      absl::StrCat(p.never_placed), absl::StrCat(p.nodes_started),
                      absl::StrCat(p.workspaces), WithinP90Text(p)});
    }
  }
  return rows;
}

std::vector<std::vector<std::string>> BudgetTable(const std::vector<VariantResult>& variants) {
  std::vector<std::vector<std::string>> rows = {
      {"VARIANT", "ORG", "LIMIT", "ACTION", "MOST-SPENT", "REFUSED", "HELD-BACK", "STOPPED"}};
  for (const VariantResult& v : variants) {
    for (const BudgetResult& b : v.result.budgets) {
      rows.push_back({v.name, b.org, absl::StrCat(Fixed(GpuHours(b.limit_micros), 2), " ",
                                                  PeriodText(b.limit.period)),
                      ActionName(b.limit.action), Fixed(GpuHours(b.most_spent), 2),
                      absl::StrCat(b.refused), absl::StrCat(b.held_back), absl::StrCat(b.stopped)});
    }
  }
  return rows;
}

nlohmann::ordered_json ReportJson(const std::vector<VariantResult>& variants,
                                  absl::Duration long_wait) {
  nlohmann::ordered_json out = {{"long_wait_s", Seconds(long_wait)},
                                {"variants", nlohmann::ordered_json::array()}};
  for (const VariantResult& v : variants) {
    nlohmann::ordered_json pools = nlohmann::ordered_json::array();
    for (const PoolResult& p : v.result.pools) pools.push_back(PoolJson(p));
    nlohmann::ordered_json budgets = nlohmann::ordered_json::array();
    for (const BudgetResult& b : v.result.budgets) budgets.push_back(BudgetJson(b));
    out["variants"].push_back({
        {"name", v.name},
        {"settings", v.settings},
        {"start", absl::FormatTime(kTimeFormat, v.result.start, absl::UTCTimeZone())},
        {"end", absl::FormatTime(kTimeFormat, v.result.end, absl::UTCTimeZone())},
        {"evaluations", v.result.evaluations},
        {"pools", std::move(pools)},
        {"budgets", std::move(budgets)},
        {"unplaceable", v.result.unplaceable},
    });
  }
  return out;
}

}  // namespace wsched::simulate
