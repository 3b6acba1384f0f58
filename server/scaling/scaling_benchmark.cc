// What one tick of the scaling leader costs against the fleet's size: the
// view it reads (Snapshot::NodesOnly, copied under the placement lock) and
// FleetScaler::Observe + Evaluate of every pool. The leader ticks four times
// a second, so at 20,000 nodes a tick's milliseconds are taken from the
// placements running beside it (docs/performance-history.md, "The scaling tick").
//
//   make -C build -j2 scaling_benchmark && build/bin/scaling_benchmark
//
// The fleet is the load test's: 7 of 8 nodes in a CPU pool, the rest 8-GPU
// nodes; a third of the nodes hold workspaces, the others are empty.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "server/placement/resources.h"
#include "server/placement/test_nodes.h"
#include "server/scaling/fleet_scaler.h"

namespace wsched::scaling {
namespace {

using placement::testing::CpuClass;
using placement::testing::CpuPool;
using placement::testing::FakeCpuNode;
using placement::testing::FakeGpuNode;
using placement::testing::GpuClass;
using placement::testing::GpuPool;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

core::Catalog Fleet() {
  core::Catalog catalog;
  catalog.pools = {CpuPool("general"), GpuPool("gpu-h100", "h100")};
  for (core::NodePool& pool : catalog.pools) pool.max_size = 1'000'000;
  catalog.classes = {CpuClass("standard"), GpuClass("gpu-1x", 1, {"h100"})};
  return catalog;
}

std::unique_ptr<placement::Snapshot> FleetSnapshot(int nodes) {
  auto snapshot = std::make_unique<placement::Snapshot>();
  const core::WorkspaceClass cpu = CpuClass("standard");
  const core::WorkspaceClass gpu = GpuClass("gpu-1x", 1, {"h100"});
  for (int i = 0; i < nodes; ++i) {
    const bool is_gpu = i % 8 == 7;
    std::string name = absl::StrCat(is_gpu ? "bench-gpu-h100-" : "bench-general-", i);
    core::NodeInfo info = is_gpu ? FakeGpuNode(name, "gpu-h100", "h100") : FakeCpuNode(name, "general");
    (void)snapshot->UpsertNode(info, core::NodeState::kReady,
                               is_gpu ? core::DriverState::kReady : core::DriverState::kNotNeeded);
    if (i % 3 != 0) continue;
    if (is_gpu) {
      (void)snapshot->Hold(absl::StrCat("w", i), name, {0}, placement::RequestOf(gpu));
    } else {
      (void)snapshot->Hold(absl::StrCat("w", i), name, {}, placement::RequestOf(cpu));
    }
  }
  return snapshot;
}

// The leader's tick on an unchanged fleet (its timers are already known, as
// on every tick but the first), with or without taking the view first.
void RunTick(benchmark::State& state, bool take_view) {
  const core::Catalog catalog = Fleet();
  const std::unique_ptr<placement::Snapshot> snapshot = FleetSnapshot(static_cast<int>(state.range(0)));
  FleetScaler fleet;
  absl::Time now = kNow;
  for (auto _ : state) {
    placement::Snapshot view = take_view ? snapshot->NodesOnly() : placement::Snapshot();
    for (const PoolObservation& obs : fleet.Observe(catalog, take_view ? view : *snapshot, {}, now)) {
      benchmark::DoNotOptimize(fleet.Evaluate(obs, now));
    }
    now += absl::Milliseconds(250);
  }
}

void BM_ScalingTick(benchmark::State& state) { RunTick(state, /*take_view=*/true); }
// Observe + Evaluate alone, on a view already taken.
void BM_ObserveAndEvaluate(benchmark::State& state) { RunTick(state, /*take_view=*/false); }

BENCHMARK(BM_ScalingTick)->Arg(1'000)->Arg(10'000)->Arg(20'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ObserveAndEvaluate)->Arg(1'000)->Arg(10'000)->Arg(20'000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace wsched::scaling

BENCHMARK_MAIN();
