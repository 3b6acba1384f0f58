// One what-if: the catalog, the cloud's timings and the simulation options
// after a list of settings (`--set pool.gpu-h100.warm_buffer=2`), and named
// variants of it (`--variant wb2:pool.gpu-h100.warm_buffer=2,...`).
//
// Settings (docs/scaling.md "Choosing a warm buffer" lists them):
//   pool.<id>.warm_buffer=N                 a constant warm buffer (replaces its windows)
//   pool.<id>.min_size=N, pool.<id>.max_size=N
//   pool.<id>.scale_down.unneeded=D, pool.<id>.scale_down.delay_after_add=D
//   pool.<id>.scale_down.schedule=none      scale down at any time
//   pool.<id>.max_node_provision_time=D
//   pool.<id>.node_start=D, pool.<id>.driver_install=D
//   pool.<id>.mig.layout=whole|fixed|by_demand, pool.<id>.mig.profiles=P/P/...
//   pool.<id>.mig_relayout=D                how long cutting a GPU anew takes
//   batching_window=D
//   org.<id>.gpu_hours_limit=X              a spending limit of X GPU-hours (first)
//   org.<id>.limit_period=month|month:ZONE|D  a calendar month (UTC or ZONE), or a rolling window D
//   org.<id>.limit_action=block_new|block_and_stop, org.<id>.stop_warning=D
//   budget_interval=D                       what a new placement commits to (--budget_interval)
// with N a whole number and D a duration such as 90s, 10m, 1h30m.
#ifndef WSCHED_SERVER_SIMULATE_SCENARIO_H_
#define WSCHED_SERVER_SIMULATE_SCENARIO_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/catalog.h"
#include "server/simulate/engine.h"

namespace wsched::simulate {

struct Scenario {
  std::string name;
  // The settings that made it from the base (for the report).
  std::vector<std::string> settings;
  SimulationInput input;
};

// "NAME:SETTING,SETTING,..." -> its name and settings. The name is 1-40 of
// a-z, 0-9, '.', '_', '-', starting with a letter or digit.
struct VariantSpec {
  std::string name;
  std::vector<std::string> settings;
};
absl::StatusOr<VariantSpec> ParseVariant(absl::string_view text);

// Applies one "KEY=VALUE" setting. InvalidArgument naming `origin` (the flag
// it came from, e.g. "--set" or "--variant wb2"), the setting and the rule;
// the scenario is unchanged then.
absl::Status ApplySetting(absl::string_view origin, absl::string_view setting, Scenario& scenario);

// `base` with each setting applied in order (first error wins).
absl::StatusOr<Scenario> WithSettings(const Scenario& base, std::string name,
                                      const std::vector<std::string>& settings,
                                      absl::string_view origin);

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_SCENARIO_H_
