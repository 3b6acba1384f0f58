#include "server/scheduler/cluster_metrics.h"

#include <map>
#include <tuple>


namespace wsched::scheduler {
namespace {

using Labels = std::map<std::string, std::string>;

prometheus::MetricFamily Family(const std::string& name, const std::string& help,
                                prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  return family;
}

void Add(prometheus::MetricFamily& family, const Labels& labels, double value) {
  prometheus::ClientMetric metric;
  for (const auto& [key, val] : labels) metric.label.push_back({key, val});
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

}  // namespace

std::vector<prometheus::MetricFamily> ClusterMetrics::Collect() const {
  using prometheus::MetricType;
  auto nodes = Family("wsched_nodes", "Nodes by pool and state.", MetricType::Gauge);
  auto gpus = Family("wsched_gpus", "GPUs by pool, model and status (total, held, unhealthy).",
                     MetricType::Gauge);
  auto not_bound = Family("wsched_gpus_not_bound",
                          "GPUs not handed out because they are not bound as their pool's "
                          "gpu_binding needs (a vfio pool: a member of the IOMMU group not on "
                          "vfio-pci; a host pool: the GPU on vfio-pci), by pool and model.",
                          MetricType::Gauge);
  auto driver = Family("wsched_driver_not_ready_nodes",
                       "GPU nodes whose driver does not match the policy, by pool and reason.",
                       MetricType::Gauge);
  auto pending = Family("wsched_pending_workspaces", "Pending workspaces by class and pool.",
                        MetricType::Gauge);
  auto oldest = Family("wsched_pending_oldest_age_seconds",
                       "Age of the oldest pending workspace, by class and pool.",
                       MetricType::Gauge);
  // GPU usage by pool and holder class only: a series per GPU and
  // workspace grew with every placement, on every replica. Per-GPU detail
  // is the DCGM exporter's.
  auto util = Family("wsched_gpu_utilization_ratio",
                     "Mean GPU utilisation (0..1) of the latest agent samples this replica "
                     "received, by pool and holder class (\"\" = not held).",
                     MetricType::Gauge);
  auto util_gpus = Family("wsched_gpu_utilization_gpus",
                          "GPUs whose latest agent sample wsched_gpu_utilization_ratio averages, "
                          "by pool and holder class.",
                          MetricType::Gauge);
  auto used = Family("wsched_gpu_memory_used_bytes",
                     "GPU memory used (sum of the latest agent samples), by pool and holder class.",
                     MetricType::Gauge);
  auto held_seconds = Family("wsched_gpu_held_seconds_total",
                             "GPU time held by workspaces, by pool and class.", MetricType::Counter);
  auto busy_seconds = Family("wsched_gpu_busy_seconds_total",
                             "GPU time busy (held time x utilisation), by pool and class.",
                             MetricType::Counter);
  auto idle = Family("wsched_idle_gpus",
                     "GPUs of workspaces this replica finds idle now (the class's idle policy), "
                     "by pool and class.",
                     MetricType::Gauge);
  auto idle_stops = Family("wsched_idle_stops_total",
                           "Workspaces this replica stopped because their GPUs were idle, by pool "
                           "and class.",
                           MetricType::Counter);

  std::map<std::pair<std::string, std::string>, int> node_counts;
  std::map<std::tuple<std::string, std::string, std::string>, int> gpu_counts;
  std::map<std::pair<std::string, std::string>, int> driver_counts;
  std::map<std::pair<std::string, std::string>, int> not_bound_counts;  // By pool, model.
  // One immutable view for the whole scrape: no lock held while walking it.
  const std::shared_ptr<const replica::ClusterView> view = scheduler_->mirror().View();
  {
    const placement::Snapshot& snapshot = view->snapshot;
    const core::Catalog& catalog = *view->catalog;
    for (const auto& pool : catalog.pools) {
      for (auto state : {core::NodeState::kProvisioning, core::NodeState::kReady,
                         core::NodeState::kCordoned, core::NodeState::kDraining,
                         core::NodeState::kLost}) {
        node_counts[{pool.id, core::NodeStateName(state)}] += 0;
      }
      if (pool.is_gpu()) {
        for (const char* status : {"total", "held", "unhealthy"}) {
          gpu_counts[{pool.id, pool.shape.gpu_model, status}] += 0;
        }
        not_bound_counts[{pool.id, pool.shape.gpu_model}] += 0;
      }
    }
    // Every configured pool shows up, even at zero nodes (scale-to-zero).
    // Per node only integer counts: the string keys are touched once per
    // node, not per GPU.
    snapshot.ForEachNode([&](const placement::SnapshotNode& node) {
      const std::string& pool = node.info.pool;
      node_counts[{pool, core::NodeStateName(node.state)}]++;
      if (node.info.gpus.empty()) return;
      if (node.driver_state != core::DriverState::kReady) {
        driver_counts[{pool, core::DriverStateName(node.driver_state)}]++;
      }
      // Labelled with the pool's model name, so series match the zero rows
      // above (drivers report longer names, e.g. "NVIDIA H100 80GB HBM3").
      const core::NodePool* declared = catalog.FindPool(pool);
      const bool pool_model = declared != nullptr && declared->is_gpu();
      const bool vfio = declared != nullptr && declared->gpu_binding == core::GpuBinding::kVfio;
      size_t i = 0;
      while (i < node.info.gpus.size()) {
        // A run of GPUs under one model label: the whole node, mostly.
        const std::string& model = pool_model ? declared->shape.gpu_model : node.info.gpus[i].model;
        int total = 0, held = 0, unhealthy = 0, unbound = 0;
        for (; i < node.info.gpus.size() && (pool_model || node.info.gpus[i].model == model); ++i) {
          total++;
          held += !node.gpus[i].holder.empty();
          unhealthy += !node.info.gpus[i].healthy;
          // As the pool needs, whatever class would come: the snapshot
          // judged both ways when the node was reported.
          unbound += !(vfio ? node.gpus[i].vm_binding_problem
                            : node.gpus[i].container_binding_problem)
                          .empty();
        }
        if (unbound > 0) not_bound_counts[{pool, model}] += unbound;
        gpu_counts[{pool, model, "total"}] += total;
        if (held > 0) gpu_counts[{pool, model, "held"}] += held;
        if (unhealthy > 0) gpu_counts[{pool, model, "unhealthy"}] += unhealthy;
      }
    });
  }
  for (const auto& [key, count] : node_counts) Add(nodes, {{"pool", key.first}, {"state", key.second}}, count);
  for (const auto& [key, count] : gpu_counts) {
    Add(gpus, {{"pool", std::get<0>(key)}, {"model", std::get<1>(key)}, {"status", std::get<2>(key)}},
        count);
  }
  for (const auto& [key, count] : driver_counts) {
    Add(driver, {{"pool", key.first}, {"reason", key.second}}, count);
  }
  for (const auto& [key, count] : not_bound_counts) {
    Add(not_bound, {{"pool", key.first}, {"model", key.second}}, count);
  }

  // The scheduler's clock, which stamped when each entry was queued.
  const absl::Time now = scheduler_->clock()();
  std::map<std::pair<std::string, std::string>, std::pair<int, absl::Duration>> pending_by;
  for (const auto& demand : view->pending) {
    std::string pool = demand.pools.empty() ? "" : demand.pools.front();
    auto& [count, age] = pending_by[{demand.class_id, pool}];
    count++;
    age = std::max(age, now - demand.since);
  }
  for (const auto& [key, value] : pending_by) {
    Labels labels{{"class", key.first}, {"pool", key.second}};
    Add(pending, labels, value.first);
    Add(oldest, labels, absl::ToDoubleSeconds(value.second));
  }

  const auto pool_class = [](const usage::PoolClass& key) -> Labels {
    return {{"pool", key.first}, {"class", key.second}};
  };
  const usage::UsageAccounting& usage = scheduler_->usage();
  for (const auto& [key, sum] : usage.LatestByPoolClass()) {
    Add(util, pool_class(key), sum.gpus > 0 ? sum.ratio_sum / sum.gpus : 0);
    Add(util_gpus, pool_class(key), sum.gpus);
    Add(used, pool_class(key), static_cast<double>(sum.memory_used_bytes));
  }
  for (const auto& [key, seconds] : usage.SecondsByPoolClass()) {
    Add(held_seconds, pool_class(key), seconds.held);
    Add(busy_seconds, pool_class(key), seconds.busy);
  }
  for (const auto& [key, gpus] : scheduler_->idle().IdleGpus()) Add(idle, pool_class(key), gpus);
  for (const auto& [key, stops] : scheduler_->idle().IdleStops()) {
    Add(idle_stops, pool_class(key), static_cast<double>(stops));
  }
  // Memory follows what is live: a "live" that keeps growing while the
  // workspaces in the database do not is a leak.
  auto tracked = Family("wsched_tracked_workspaces",
                        "Workspaces the replica keeps in memory: live ones, and recently ended "
                        "ones whose version the change feed may still bring.",
                        MetricType::Gauge);
  const replica::TrackedWorkspaces& counts = view->tracked;
  Add(tracked, {{"kind", "live"}}, static_cast<double>(counts.live));
  Add(tracked, {{"kind", "recently_ended"}}, static_cast<double>(counts.recently_ended));
  // How much re-deciding the pending queue costs: a drain tries only the
  // work that may use a pool whose capacity changed.
  auto decisions = Family("wsched_queue_decisions_total",
                          "Pending workspaces a queue drain decided again.", MetricType::Counter);
  Add(decisions, {}, static_cast<double>(scheduler_->pipeline().drain().Decisions()));
  return {nodes,        gpus,         not_bound, driver, pending, oldest, util, util_gpus, used,
          held_seconds, busy_seconds, idle,   idle_stops, tracked, decisions};
}

}  // namespace wsched::scheduler
