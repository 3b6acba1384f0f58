// A simulation's results as a table (for people) and JSON (for scripts).
#ifndef WSCHED_SERVER_SIMULATE_SIMULATION_REPORT_H_
#define WSCHED_SERVER_SIMULATE_SIMULATION_REPORT_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/simulate/engine.h"

namespace wsched::simulate {

struct VariantResult {
  std::string name;
  std::vector<std::string> settings;
  SimulationResult result;
};

// The header, then one row per variant and pool that had any workspaces or
// nodes: node-hours, GPU-hours paid and used, idle share, GPU-hours
// stranded, MIG re-layouts, waits, long waits, nodes started.
std::vector<std::vector<std::string>> ReportTable(const std::vector<VariantResult>& variants,
                                                  absl::Duration long_wait);

// The header, then one row per variant and spending limit (org_budgets.h):
// VARIANT ORG LIMIT ACTION MOST-SPENT REFUSED HELD-BACK STOPPED, GPU-hours
// per period. Only the header when no variant has a limit.
std::vector<std::vector<std::string>> BudgetTable(const std::vector<VariantResult>& variants);

// {"long_wait_s": .., "variants": [{"name", "settings", "start", "end",
//   "pools": [{"pool", "node_hours", ..., "timings": {...}}], "budgets": [{"org",
//   "gpu_hours_limit", "action", "most_spent_gpu_hours", "refused", "held_back",
//   "stopped"}], "unplaceable"}]}
// (docs/scaling.md "Reading the results" lists the fields).
nlohmann::ordered_json ReportJson(const std::vector<VariantResult>& variants,
                                  absl::Duration long_wait);

// "4m30s" style, rounded to the second ("0s" for none).
std::string WaitText(absl::Duration d);

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_SIMULATION_REPORT_H_
