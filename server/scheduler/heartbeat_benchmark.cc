// What a heartbeat that only brings GPU samples costs on the replica, with
// and without the idle-GPU policy judging them (docs/performance-history.md
// "Idle GPUs and the heartbeat"). No database: such a heartbeat must not need
// one (the inventory has none here, so a write would fail the run), and a
// counter shows it copied no cluster view.
//
//   make -C build -j2 heartbeat_benchmark && build/bin/heartbeat_benchmark
//
// An 8-GPU node whose GPUs four workspaces hold (two each), all idle.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "server/core/driver_readiness.h"
#include "server/placement/test_nodes.h"
#include "server/idle/idle_monitor.h"
#include "server/inventory/node_inventory.h"

namespace wsched::scheduler {
namespace {

// The mirror the inventory reads: one node, its holders, a catalog.
class BenchMirror : public inventory::NodeInventory::Mirror, public idle::IdleMonitor::Actions {
 public:
  explicit BenchMirror(bool with_policy) {
    core::Catalog catalog;
    core::WorkspaceClass cls;
    cls.id = "gpu-2x";
    cls.gpu.count = 2;
    if (with_policy) cls.idle = core::IdlePolicy{5, absl::Minutes(30), core::IdleAction::kStop, absl::Minutes(5)};
    catalog.classes.push_back(cls);
    catalog_ = std::make_shared<const core::Catalog>(std::move(catalog));
    auto node = std::make_shared<store::StoredNode>();
    node->info = placement::testing::FakeGpuNode("g1", "gpu-h100", "h100", 8);
    node->state = core::NodeState::kReady;
    node->driver_history = core::HistoryOnReport(catalog_->driver_policy, node->info, {}, false);
    core::DriverReadiness readiness =
        core::EvaluateDriver(catalog_->driver_policy, node->info, node->driver_history);
    node->driver_state = readiness.state;
    node->driver_detail = readiness.detail;
    node_ = node;
    for (int i = 0; i < 8; ++i) {
      holders_[node_->info.gpus[i].uuid] = {absl::StrCat("ws-", i / 2), "gpu-2x", 10 + i / 2};
    }
  }
  // NodeInventory::Mirror
  std::shared_ptr<const core::Catalog> CurrentCatalog() const override { return catalog_; }
  std::shared_ptr<const replica::ClusterView> View() const override {
    views++;
    return std::make_shared<const replica::ClusterView>();
  }
  Node MirroredNode(const std::string&) const override { return {node_, holders_, std::nullopt}; }
  // IdleMonitor::Actions (only Catalog is used on the heartbeat path).
  std::shared_ptr<const core::Catalog> Catalog() const override { return catalog_; }
  absl::flat_hash_map<std::string, Known> KnownOf(const std::vector<std::string>&) override {
    return {};
  }
  absl::StatusOr<int64_t> Mark(const std::string&, int64_t,
                               const std::optional<core::IdleMark>&) override {
    return absl::UnimplementedError("not on the heartbeat path");
  }
  absl::Status StopIdle(const std::string&, int64_t) override {
    return absl::UnimplementedError("not on the heartbeat path");
  }

  const store::StoredNode& node() const { return *node_; }
  mutable int views = 0;

 private:
  std::shared_ptr<const core::Catalog> catalog_;
  std::shared_ptr<const store::StoredNode> node_;
  usage::GpuHolders holders_;
};

// range(0): 0 = samples recorded only, 1 = and judged by the idle monitor.
void BM_HeartbeatWithSamples(benchmark::State& state) {
  const bool judged = state.range(0) == 1;
  BenchMirror mirror(judged);
  metrics::Metrics metrics;
  absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  usage::UsageAccounting usage([&now] { return now; });
  inventory::NodeInventory inventory({.mirror = &mirror, .usage = &usage, .metrics = &metrics}, {},
                          [&now] { return now; });
  idle::IdleMonitor monitor(&mirror, {}, [&now] { return now; });
  if (judged) {
    usage.SetObserver(
        [&monitor](const usage::UsageAccounting::Report& report) { monitor.Observe(report); });
  }
  inventory::HeartbeatInput beat;
  beat.node_name = "g1";
  for (const core::Gpu& gpu : mirror.node().info.gpus) beat.usage.push_back({gpu.uuid, 1, 1 << 30});
  for (auto _ : state) {
    now += absl::Seconds(10);
    absl::StatusOr<inventory::HeartbeatResult> result = inventory.Heartbeat(beat);
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
    benchmark::DoNotOptimize(result);
  }
  state.counters["view_copies"] = mirror.views;
}
BENCHMARK(BM_HeartbeatWithSamples)->Arg(0)->Arg(1);

}  // namespace
}  // namespace wsched::scheduler

BENCHMARK_MAIN();
