// The what-if simulator: replays workspace arrivals through the server's own
// placement (placement::Decide on a placement::Snapshot, the PendingQueue's
// order) and scaling code (scaling::FleetScaler, which the server's scaling
// leader runs) on a simulated clock, with a simulated cloud that starts the
// nodes a signal asks for and deletes the nodes it names.
//
// Pure: no clock, no files, no threads; the caller reads the inputs (the
// CLI layer, server/cli/simulate_command.cc). docs/scaling.md "Choosing a
// warm buffer" says how to read the results.
//
// Time is event-driven: the scaler is evaluated on the server's tick grid
// (multiples of `tick`), but only at ticks where something happened or where
// one of its timers (batching window, idle time, delay after a scale-up,
// provisioning deadline, backoff, a schedule window's edge) can change its
// answer, so a week of 100,000 workspaces takes seconds, not the 2.4 million
// evaluations a tick-by-tick replay would cost.
#ifndef WSCHED_SERVER_SIMULATE_ENGINE_H_
#define WSCHED_SERVER_SIMULATE_ENGINE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/core/spending_limit.h"
#include "server/simulate/org_budgets.h"
#include "server/placement/time_to_gpu.h"
#include "server/simulate/workload.h"

namespace wsched::simulate {

struct SimulationOptions {
  // The scaling leader's evaluation period (the server's 250 ms).
  absl::Duration tick = absl::Milliseconds(250);
  // --scaling_batching_window of the server.
  absl::Duration batching_window = absl::Seconds(2);
  // A workspace that waits longer than this counts in `waited_long`.
  absl::Duration long_wait = absl::Minutes(5);
  // Start each pool at the size its schedule wants at the first arrival
  // (min_size or the warm buffer in effect), as a running cluster would be,
  // instead of empty (then the first arrivals wait for min_size nodes).
  bool warm_start = true;
  // The scaling leader plans MIG re-layouts every 4 ticks (a second), so
  // work that arrives together is planned together.
  absl::Duration relayout_period = absl::Seconds(1);
  // Evaluate every pool at every tick, as the server does, instead of only
  // when an answer can change: slow, for tests that the two agree.
  bool every_tick = false;
  // --budget_interval of the server: what a new GPU placement commits to
  // against its org's spending limit.
  absl::Duration budget_interval = absl::Seconds(60);
};

struct SimulationInput {
  core::Catalog catalog;
  // Spending limits by org id (docs/scaling.md "Replaying a spending
  // limit"), checked with core::SpendingLimitProblems before the replay.
  std::map<std::string, core::SpendingLimit> org_limits;
  // By pool id; a pool not listed gets PoolTimings{}.
  std::map<std::string, PoolTimings> timings;
  SimulationOptions options;
};

// The pool at one moment; a new step whenever a figure changes.
struct Step {
  absl::Time at;
  int nodes = 0;   // Paid for: asked for and not deleted yet.
  int target = 0;  // The latest signal's target.
  // GPUs (GPU pools) or CPU millis (CPU pools) held and waiting: the
  // demand, in the unit of `PoolResult::unit_per_node`.
  int64_t demand = 0;
};

// A signal whose target changed, as an actuator saw it.
struct TargetChange {
  absl::Time at;
  int target = 0;
};

struct PoolResult {
  std::string pool;
  bool gpu = false;
  // Its GPUs are cut into MIG slices (a fixed or by_demand layout): the
  // unit is a seventh of a GPU, the share of one compute slice.
  bool mig = false;
  // GPUs per node (GPU pools), sevenths of a GPU per node (MIG pools) or CPU
  // millis per node (CPU pools).
  int64_t unit_per_node = 0;
  PoolTimings timings;

  double node_hours = 0;      // Nodes paid for x hours.
  double gpu_hours_paid = 0;  // node_hours x GPUs per node.
  double gpu_hours_used = 0;  // GPUs held x hours (a slice by its share).
  // GPU-hours free on registered nodes while work for the pool waited:
  // capacity paid for that the waiting work could not use (on MIG pools,
  // slices of the wrong size: fragmentation; also GPUs being cut anew).
  double gpu_hours_stranded = 0;
  int64_t relayouts = 0;  // MIG GPUs cut anew (by_demand pools).
  // Share of what was paid that no workspace held: of GPU-hours on a GPU
  // pool, of CPU-core-hours on a CPU pool. 0 when nothing was paid.
  double idle_share = 0;

  // Workspaces placed on this pool, and those never placed whose preferred
  // pool it is.
  int64_t workspaces = 0;
  int64_t never_placed = 0;
  // Over the placed ones.
  absl::Duration wait_p50, wait_p95, wait_max;
  int64_t waited_long = 0;  // Waited longer than SimulationOptions::long_wait.
  // Queued workspaces placed here, checked as the server checks them
  // (docs/placement.md "Estimates that are checked"): the time-to-GPU
  // estimate the server would give at queue entry, from the pending reason
  // and this pool's timings (p50 = p90: one figure each), against the wait.
  int64_t estimates_checked = 0;
  int64_t estimates_within_p90 = 0;
  int64_t nodes_started = 0;

  std::vector<Step> steps;
  std::vector<TargetChange> targets;
};

struct WorkspaceOutcome {
  std::string id;    // The trace's.
  std::string pool;  // Where it ran; its preferred pool when never placed.
  absl::Time arrival;
  std::optional<absl::Time> placed_at;
  // Queued: the time-to-GPU estimate the server would have answered with,
  // its phases (each with its p50 and p90) and the p90 it is checked
  // against; empty and unset when it was placed at once or no estimate
  // exists.
  std::vector<placement::EstimatePhase> estimate_phases;
  std::optional<absl::Duration> estimate_p90;
};

struct SimulationResult {
  absl::Time start, end;
  std::vector<PoolResult> pools;           // In catalog order.
  std::vector<WorkspaceOutcome> workspaces;  // In trace order.
  // Arrivals whose class no pool can ever hold: "trace line 7: ...".
  std::vector<std::string> unplaceable;
  int64_t evaluations = 0;  // Scaler evaluations (per pool).
  std::vector<BudgetResult> budgets;  // Per limited org, by org id.
};

// Arrivals are replayed in time order (the trace need not be sorted).
// InvalidArgument for a trace row whose class is not in the catalog (or no
// default class for one without), an empty trace, or a tick not above zero.
absl::StatusOr<SimulationResult> Simulate(const SimulationInput& input,
                                          const std::vector<Arrival>& trace);

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_ENGINE_H_
