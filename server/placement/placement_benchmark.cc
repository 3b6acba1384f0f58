// Decision cost against snapshot size (docs/performance.md "Targets": well under a
// millisecond at 10,000 nodes, growing far slower than the node count).
//
//   cmake -S . -B build-placement && make -C build-placement -j2 placement_benchmark
//   build-placement/server/placement/placement_benchmark
//
// Snapshots mix pools (40% CPU, 30% 8x h100, 20% 8x a100, 10% 4x l4) and are
// partly full, from a fixed seed so runs compare. The sliced fleet is the same
// with the h100 nodes replaced by 8x h200 nodes in MIG mode, every GPU laid
// out as seven 1g.18gb slices (docs/performance.md "Slices").
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "server/placement/decide.h"
#include "server/placement/fixes.h"
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
using testing::LayOutSlices;
using testing::SliceClass;

const std::vector<core::NodePool>& Pools() {
  static const auto* pools = new std::vector<core::NodePool>{
      CpuPool("cpu"), GpuPool("gpu-h100", "h100"), GpuPool("gpu-a100", "a100"),
      GpuPool("gpu-l4", "l4", 4), GpuPool("gpu-h200", "h200")};
  return *pools;
}

// `linked`: every GPU node reports NVLink pairs 0-1, 2-3, ... (SYS between
// pairs), so every GPU decision weighs links (docs/placement.md "Linked GPUs").
// An h200 node in MIG mode (7 x 1g.18gb per GPU), 1 .. all but one of its
// 56 slices held.
void AddSlicedNode(Snapshot& snapshot, const std::string& name, std::mt19937& rng, int& workspace) {
  core::NodeInfo info = FakeGpuNode(name, "gpu-h200", "h200", 8);
  LayOutSlices(info, std::vector<std::string>(7, "1g.18gb"));
  (void)snapshot.UpsertNode(info, core::NodeState::kReady, core::DriverState::kReady);
  const int held = std::uniform_int_distribution<int>(1, 55)(rng);
  for (int s = 0; s < held; ++s) {
    (void)snapshot.HoldSlice(absl::StrCat("w", ++workspace), name, {s / 7, s % 7 + 1},
                             RequestOf(SliceClass("slice", {"1g.18gb"})));
  }
}

std::unique_ptr<Snapshot> BuildSnapshot(int nodes, bool linked, bool sliced) {
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
    if (sliced && slot < 7) {
      AddSlicedNode(*snapshot, name, rng, workspace);
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
Snapshot& SnapshotOf(int nodes, bool linked = false, bool sliced = false) {
  static auto* cache = new std::map<std::tuple<int, bool, bool>, std::unique_ptr<Snapshot>>();
  auto& slot = (*cache)[{nodes, linked, sliced}];
  if (!slot) slot = BuildSnapshot(nodes, linked, sliced);
  return *slot;
}

void RunDecide(benchmark::State& state, const core::WorkspaceClass& cls, bool linked = false,
               bool sliced = false) {
  const Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)), linked, sliced);
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
// One MIG slice on the sliced fleet, against BM_DecideGpu1 on the whole one.
void BM_DecideSlice(benchmark::State& state) {
  RunDecide(state, SliceClass("slice", {"1g.18gb"}), /*linked=*/false, /*sliced=*/true);
}
// A profile no GPU is laid out for first, then the one they have.
void BM_DecideSliceFallback(benchmark::State& state) {
  RunDecide(state, SliceClass("slice", {"3g.71gb", "1g.18gb"}), /*linked=*/false,
            /*sliced=*/true);
}
// The whole in-memory step of one slice workspace's start and stop, against
// BM_DecideHoldRelease.
void BM_DecideHoldReleaseSlice(benchmark::State& state) {
  Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)), false, /*sliced=*/true);
  const core::WorkspaceClass cls = SliceClass("slice", {"1g.18gb"});
  for (auto _ : state) {
    Placed placed = std::get<Placed>(Decide(cls, Pools(), snapshot));
    benchmark::DoNotOptimize(
        snapshot.HoldSlice("bench", placed.node, *placed.slice, placed.resources));
    benchmark::DoNotOptimize(snapshot.Release("bench"));
  }
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

// The same for a class whose only pool (h200) has no node in this fleet:
// the walk looks at the nodes of the pools the class and the queue ahead
// can use (PoolsThatMatter), so this stays flat as the fleet grows.
void BM_ExplainPendingEmptyPool(benchmark::State& state) {
  const Snapshot& snapshot = SnapshotOf(static_cast<int>(state.range(0)));
  const core::WorkspaceClass cls = GpuClass("gpu-8-h200", 8, {"h200"});
  const std::vector<core::DriverPolicyEntry> no_policy;
  PendingContext ctx;
  ctx.cls = &cls;
  ctx.pools = &Pools();
  ctx.snapshot = &snapshot;
  ctx.driver_policy = &no_policy;
  for (auto _ : state) benchmark::DoNotOptimize(ExplainPending(ctx));
}

// What would let a pending workspace go (a GetWorkspace read of it, off
// the placement lock, on the replica's NodesOnly view): gpu-8 waits at the
// end of a queue of range(1) gpu-8 workspaces, every pool past its
// max_size and no node with 8 GPUs free, so every kind of candidate is
// tried: three other classes, the max_size search in both pools.
void BM_FixesGpu8(benchmark::State& state) {
  const Snapshot view = SnapshotOf(static_cast<int>(state.range(0))).NodesOnly();
  const std::vector<core::WorkspaceClass> classes = {
      GpuClass("gpu-8", 8, {"l4", "h100"}), GpuClass("gpu-4", 4, {"h100", "a100"}),
      GpuClass("gpu-2", 2, {"h100"}), GpuClass("gpu-1", 1, {"l4"})};
  const std::vector<core::DriverPolicyEntry> no_policy;
  FixInputs in;
  in.pending.cls = &classes[0];
  in.pending.pools = &Pools();
  in.pending.snapshot = &view;
  in.pending.driver_policy = &no_policy;
  in.pending.ahead.assign(static_cast<size_t>(state.range(1)), &classes[0]);
  in.pending.queue_position = static_cast<int>(state.range(1)) + 1;
  in.classes = &classes;
  std::vector<PendingFix> fixes;
  for (auto _ : state) {
    fixes = FindFixes(in);
    benchmark::DoNotOptimize(fixes);
  }
  state.SetLabel(absl::StrCat(fixes.size(), " fixes, first ",
                              fixes.empty() ? "none" : FixKindName(fixes[0].kind)));
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
BENCHMARK(BM_DecideSlice)->SIZES;
BENCHMARK(BM_DecideSliceFallback)->SIZES;
BENCHMARK(BM_DecideHoldReleaseSlice)->SIZES;
BENCHMARK(BM_HoldRelease)->SIZES;
BENCHMARK(BM_DecideHoldRelease)->SIZES;
BENCHMARK(BM_CopyNodesOnly)->SIZES;
BENCHMARK(BM_CopyWithHolds)->SIZES;
BENCHMARK(BM_HoldReleaseWhileAViewIsHeld)->SIZES;
BENCHMARK(BM_ExplainPendingGpu8)->ArgsProduct({{100, 1000, 10000}, {0, 100}});
BENCHMARK(BM_ExplainPendingEmptyPool)->SIZES;
BENCHMARK(BM_FixesGpu8)->ArgsProduct({{1000, 10000}, {0, 999}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wsched::placement

BENCHMARK_MAIN();
