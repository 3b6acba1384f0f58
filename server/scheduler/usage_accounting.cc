#include "server/scheduler/usage_accounting.h"

namespace wsched::scheduler {

void UsageAccounting::Record(const std::string& node, const std::string& pool,
                             std::vector<GpuUsage> samples, const GpuHolders& holders) {
  const absl::Time now = clock_();
  {
    absl::MutexLock lock(&mu_);
    NodeSamples& previous = nodes_[node];
    if (previous.at != absl::Time()) {
      const double seconds = absl::ToDoubleSeconds(now - previous.at);
      for (const auto& [uuid, holder] : holders) {
        Seconds& charged = seconds_[{pool, holder.class_id}];
        charged.held += seconds;
        for (const GpuUsage& sample : previous.samples) {
          if (sample.uuid == uuid) charged.busy += seconds * sample.utilization_percent / 100.0;
        }
      }
    }
    previous.pool = pool;
    previous.classes.clear();
    for (const GpuUsage& sample : samples) {
      auto holder = holders.find(sample.uuid);
      previous.classes.push_back(holder == holders.end() ? "" : holder->second.class_id);
    }
    previous.samples = samples;
    previous.at = now;
  }
  if (observer_) observer_({node, pool, samples, holders, now});
}

void UsageAccounting::ForgetNode(const std::string& node) {
  absl::MutexLock lock(&mu_);
  nodes_.erase(node);
}

size_t UsageAccounting::node_count() const {
  absl::MutexLock lock(&mu_);
  return nodes_.size();
}

std::map<PoolClass, UsageAccounting::Utilization> UsageAccounting::LatestByPoolClass() const {
  absl::MutexLock lock(&mu_);
  std::map<PoolClass, Utilization> out;
  for (const auto& [node, latest] : nodes_) {
    for (size_t i = 0; i < latest.samples.size(); ++i) {
      Utilization& sum = out[{latest.pool, latest.classes[i]}];
      sum.gpus++;
      sum.ratio_sum += latest.samples[i].utilization_percent / 100.0;
      sum.memory_used_bytes += latest.samples[i].memory_used_bytes;
    }
  }
  return out;
}

std::map<PoolClass, UsageAccounting::Seconds> UsageAccounting::SecondsByPoolClass() const {
  absl::MutexLock lock(&mu_);
  return seconds_;
}

}  // namespace wsched::scheduler
