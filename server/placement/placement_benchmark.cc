// Decision cost against snapshot size (docs/performance.md "Targets": well under a
// millisecond at 10,000 nodes, growing far slower than the node count).
//
//   cmake -S . -B build-placement && make -C build-placement -j2 placement_benchmark
//   build-placement/server/placement/placement_benchmark
//
// Snapshots mix pools (40% CPU, 30% 8x h100, 20% 8x a100, 10% 4x l4) and are
// partly full, from a fixed seed so runs compare.
#include <map>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "server/placement/decide.h"
#include "server/placement/pending_reason.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using testing::CpuClass;
using testing::CpuPool;
using testing::FakeCpuNode;
using testing::FakeGpuNode;
using testing::GpuClass;
using testing::GpuPool;

const std::vector<core::NodePool>& Pools() {
  static const auto* pools = new std::vector<core::NodePool>{
      CpuPool("cpu"), GpuPool("gpu-h100", "h100"), GpuPool("gpu-a100", "a100"),
      GpuPool("gpu-l4", "l4", 4)};
  return *pools;
}

// `linked`: every GPU node reports NVLink pairs 0-1, 2-3, ... (SYS between
// pairs), so every GPU decision weighs links (docs/placement.md "Linked GPUs").
std::unique_ptr<Snapshot> BuildSnapshot(int nodes, bool linked) {
  auto snapshot = std::make_unique<Snapshot>();
  std::mt19937 rng(42);
  int workspace = 0;
  for (int i = 0; i < nodes; ++i) {
    const int slot = i % 10;
    std::string name = absl::StrCat("node-", i);
    if (slot < 4) {
      (void)snapshot->UpsertNode(FakeCpuNode(name, "cpu"), core::NodeState::kReady,
                                 core::DriverState::kNotNeeded);
      // Up to 15 of 16 four-CPU workspaces.
      int held = std::uniform_int_distribution<int>(0, 15)(rng);
      for (int w = 0; w < held; ++w) {
        (void)snapshot->Hold(absl::StrCat("w", ++workspace), name, {},
                             RequestOf(CpuClass("standard")));
      }
      continue;
    }
    const char* pool = slot < 7 ? "gpu-h100" : slot < 9 ? "gpu-a100" : "gpu-l4";
    const char* model = slot < 7 ? "h100" : slot < 9 ? "a100" : "l4";
    const int gpus = slot < 9 ? 8 : 4;
    core::NodeInfo info = FakeGpuNode(name, pool, model, gpus);
    for (int g = 0; linked && g + 1 < gpus; g += 2) testing::LinkPair(info, g, g + 1);
    (void)snapshot->UpsertNode(info, core::NodeState::kReady, core::DriverState::kReady);
    // Every node partly used: 1 .. all GPUs held by 1-GPU workspaces.
    int held = std::uniform_int_distribution<int>(1, gpus)(rng);
    for (int g = 0; g < held; ++g) {
      (void)snapshot->Hold(absl::StrCat("w", ++workspace), name, {g},
                           RequestOf(GpuClass("gpu-1", 1)));
    }
  }
  return snapshot;
}

// Built once per size and shared by the benchmarks.
Snapshot& SnapshotOf(int nodes, bool linked = false) {
  static auto* cache = new std::map<std::pair<int, bool>, std::unique_ptr<Snapshot>>();
  auto& slot = (*cache)[{nodes, linked}];
  if (!slot) slot = BuildSnapshot(nodes, linked);
  return *slot;
}

void RunDecide(benchmark::State& state, const core::WorkspaceClass& cls, bool linked = false) {
  const Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)), linked);
  for (auto _ : state) {
    Decision decision = Decide(cls, Pools(), snapshot);
    benchmark::DoNotOptimize(decision);
  }
  state.SetLabel(DecisionKind(Decide(cls, Pools(), snapshot)));
}

void BM_DecideGpu1(benchmark::State& state) {
  RunDecide(state, GpuClass("gpu-1", 1, {"h100", "a100"}));
}
void BM_DecideGpu4(benchmark::State& state) {
  RunDecide(state, GpuClass("gpu-4", 4, {"h100", "a100"}));
}
void BM_DecideCpu(benchmark::State& state) { RunDecide(state, CpuClass("standard")); }
// The same fleet with NVLink pairs reported: each GPU choice weighs links.
void BM_DecideGpu1Linked(benchmark::State& state) {
  RunDecide(state, GpuClass("gpu-1", 1, {"h100", "a100"}), /*linked=*/true);
}
void BM_DecideGpu4Linked(benchmark::State& state) {
  RunDecide(state, GpuClass("gpu-4", 4, {"h100", "a100"}), /*linked=*/true);
}
// A pair that must share NVLink: nodes with two free GPUs but no free pair
// are passed over.
void BM_DecideGpu2NvlinkRequired(benchmark::State& state) {
  core::WorkspaceClass cls = GpuClass("gpu-2", 2, {"h100", "a100"});
  cls.gpu.links = core::GpuLinks::kNvlinkRequired;
  RunDecide(state, cls, /*linked=*/true);
}
void BM_DecideGpu2(benchmark::State& state) {
  RunDecide(state, GpuClass("gpu-2", 2, {"h100", "a100"}), /*linked=*/true);
}
// Nothing has 8 free GPUs: the "not now" path with its reasons.
void BM_DecideGpu8NotNow(benchmark::State& state) {
  RunDecide(state, GpuClass("gpu-8", 8, {"l4", "h100"}));
}

// A placement's snapshot bookkeeping: hold what Decide chose, then release.
void BM_HoldRelease(benchmark::State& state) {
  Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)));
  const core::WorkspaceClass cls = GpuClass("gpu-1", 1, {"h100", "a100"});
  Placed placed = std::get<Placed>(Decide(cls, Pools(), snapshot));
  for (auto _ : state) {
    benchmark::DoNotOptimize(snapshot.Hold("bench", placed.node, placed.gpu_indices,
                                           placed.resources));
    benchmark::DoNotOptimize(snapshot.Release("bench"));
  }
}

// The whole in-memory step of one workspace start and stop.
void BM_DecideHoldRelease(benchmark::State& state) {
  Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)));
  const core::WorkspaceClass cls = GpuClass("gpu-1", 1, {"h100", "a100"});
  for (auto _ : state) {
    Placed placed = std::get<Placed>(Decide(cls, Pools(), snapshot));
    benchmark::DoNotOptimize(snapshot.Hold("bench", placed.node, placed.gpu_indices,
                                           placed.resources));
    benchmark::DoNotOptimize(snapshot.Release("bench"));
  }
}

// What a reader's view costs under the placement lock (Snapshot::NodesOnly)
// and a full copy, holds included.
void BM_CopyNodesOnly(benchmark::State& state) {
  const Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(snapshot.NodesOnly());
}
void BM_CopyWithHolds(benchmark::State& state) {
  const Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(Snapshot(snapshot));
}

// A placement right after a reader took a view: the hold copies the node it
// changes (and its pool's index) before changing them. Compare with
// BM_HoldRelease.
void BM_HoldReleaseWhileAViewIsHeld(benchmark::State& state) {
  Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)));
  const core::WorkspaceClass cls = GpuClass("gpu-1", 1, {"h100", "a100"});
  Placed placed = std::get<Placed>(Decide(cls, Pools(), snapshot));
  for (auto _ : state) {
    state.PauseTiming();
    Snapshot view = snapshot.NodesOnly();
    state.ResumeTiming();
    benchmark::DoNotOptimize(snapshot.Hold("bench", placed.node, placed.gpu_indices,
                                           placed.resources));
    benchmark::DoNotOptimize(snapshot.Release("bench"));
    state.PauseTiming();
    view = Snapshot();  // The reader lets go, outside the timing.
    state.ResumeTiming();
  }
}

// Why a workspace waits (what a pending placement and a read of a pending
// workspace compute under the placement lock): the queue's simulation over
// every node, with range(1) workspaces ahead of it.
void BM_ExplainPendingGpu8(benchmark::State& state) {
  const Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)));
  const core::WorkspaceClass cls = GpuClass("gpu-8", 8, {"l4", "h100"});
  const std::vector<core::DriverPolicyEntry> no_policy;
  PendingContext ctx;
  ctx.cls = &cls;
  ctx.pools = &Pools();
  ctx.snapshot = &snapshot;
  ctx.driver_policy = &no_policy;
  ctx.ahead.assign(static_cast<size_t>(state.range(1)), &cls);
  for (auto _ : state) benchmark::DoNotOptimize(ExplainPending(ctx));
}

#define SIZES Arg(100)->Arg(1000)->Arg(10000)
BENCHMARK(BM_DecideGpu1)->SIZES;
BENCHMARK(BM_DecideGpu4)->SIZES;
BENCHMARK(BM_DecideCpu)->SIZES;
BENCHMARK(BM_DecideGpu1Linked)->SIZES;
BENCHMARK(BM_DecideGpu4Linked)->SIZES;
BENCHMARK(BM_DecideGpu2)->SIZES;
BENCHMARK(BM_DecideGpu2NvlinkRequired)->SIZES;
BENCHMARK(BM_DecideGpu8NotNow)->SIZES;
BENCHMARK(BM_HoldRelease)->SIZES;
BENCHMARK(BM_DecideHoldRelease)->SIZES;
BENCHMARK(BM_CopyNodesOnly)->SIZES;
BENCHMARK(BM_CopyWithHolds)->SIZES;
BENCHMARK(BM_HoldReleaseWhileAViewIsHeld)->SIZES;
BENCHMARK(BM_ExplainPendingGpu8)->ArgsProduct({{100, 1000, 10000}, {0, 100}});

}  // namespace
}  // namespace wsched::placement

BENCHMARK_MAIN();
