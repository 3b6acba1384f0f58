// How long the simulator takes to replay a week (docs/performance-history.md
// "Simulator": a week of 100,000 workspaces over the 3 pools of
// classes/saas.yaml in under 10 s).
//
//   flock /tmp/wsched-build.lock cmake --build build -j2 --target simulate_benchmark
//   build/bin/simulate_benchmark --benchmark_filter=BM_SimulateWeek
//
// The trace is the synthetic week (server/simulate/synthetic.h, seed 1).
//  - BM_SimulateWeek/raised_max: max_size raised (general 400, GPU pools
//    200) so that every workspace finds room after a node start; the pools
//    reach ~150 CPU and ~40 GPU nodes at the peak.
//  - BM_SimulateWeek/stock: the catalog as shipped; its GPU pools (8 and 16
//    nodes) cannot hold the weekday peaks, so queues grow to thousands.
//  - BM_SimulateMonday/every_tick:0|1: the first day, event-driven and tick
//    by tick (the server's way, SimulationOptions::every_tick), for the
//    ratio between the two.
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "server/catalog/load.h"
#include "server/simulate/engine.h"
#include "server/simulate/scenario.h"
#include "server/simulate/synthetic.h"

namespace wsched::simulate {
namespace {

SimulationInput SaasInput(bool raise_max) {
  absl::StatusOr<core::Catalog> catalog =
      catalog::LoadCatalog(absl::StrCat(WSCHED_SOURCE_DIR, "/classes/saas.yaml"));
  if (!catalog.ok()) std::abort();
  Scenario scenario;
  scenario.input.catalog = *std::move(catalog);
  for (const core::NodePool& pool : scenario.input.catalog.pools) {
    scenario.input.timings[pool.id] = {.node_start = absl::Minutes(5),
                                       .driver_install = absl::ZeroDuration()};
  }
  if (raise_max) {
    for (const char* setting : {"pool.general.max_size=400", "pool.gpu-h100.max_size=200",
                                "pool.gpu-a100.max_size=200"}) {
      if (!ApplySetting("benchmark", setting, scenario).ok()) std::abort();
    }
  }
  return scenario.input;
}

void Run(benchmark::State& state, const SimulationInput& input, const std::vector<Arrival>& trace) {
  int64_t evaluations = 0, placed = 0;
  for (auto _ : state) {
    absl::StatusOr<SimulationResult> result = Simulate(input, trace);
    if (!result.ok()) std::abort();
    evaluations = result->evaluations;
    placed = 0;
    for (const WorkspaceOutcome& w : result->workspaces) placed += w.placed_at.has_value();
    benchmark::DoNotOptimize(result);
  }
  state.counters["workspaces"] = static_cast<double>(trace.size());
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["evaluations"] = static_cast<double>(evaluations);
}

void BM_SimulateWeek(benchmark::State& state, bool raise_max) {
  static const std::vector<Arrival>* week =
      new std::vector<Arrival>(SyntheticTrace({.workspaces = 100'000, .days = 7}));
  Run(state, SaasInput(raise_max), *week);
}
BENCHMARK_CAPTURE(BM_SimulateWeek, raised_max, true)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_SimulateWeek, stock, false)->Unit(benchmark::kSecond)->Iterations(1);

// One weekday (Monday) of the same week, event-driven and tick by tick.
void BM_SimulateMonday(benchmark::State& state) {
  static const std::vector<Arrival>* monday = [] {
    auto* day = new std::vector<Arrival>(SyntheticTrace({.workspaces = 100'000, .days = 7}));
    const absl::Time tuesday = day->front().time + absl::Hours(24);
    std::erase_if(*day, [&](const Arrival& a) { return a.time >= tuesday; });
    return day;
  }();
  SimulationInput input = SaasInput(true);
  input.options.every_tick = state.range(0) == 1;
  Run(state, input, *monday);
}
BENCHMARK(BM_SimulateMonday)->ArgName("every_tick")->Arg(0)->Arg(1)->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace wsched::simulate

BENCHMARK_MAIN();
