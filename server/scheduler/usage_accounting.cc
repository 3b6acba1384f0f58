#include "server/scheduler/usage_accounting.h"

namespace wsched::scheduler {

void UsageAccounting::Record(const std::string& node, std::vector<GpuUsage> samples,
                             const absl::flat_hash_map<std::string, std::string>& holder_classes) {
  const absl::Time now = clock_();
  absl::MutexLock lock(&mu_);
  NodeSamples& previous = nodes_[node];
  if (previous.at != absl::Time()) {
    const double seconds = absl::ToDoubleSeconds(now - previous.at);
    for (const auto& [uuid, class_id] : holder_classes) {
      auto& [held, busy] = seconds_[class_id];
      held += seconds;
      for (const GpuUsage& sample : previous.samples) {
        if (sample.uuid == uuid) busy += seconds * sample.utilization_percent / 100.0;
      }
    }
  }
  previous.samples = std::move(samples);
  previous.at = now;
}

void UsageAccounting::ForgetNode(const std::string& node) {
  absl::MutexLock lock(&mu_);
  nodes_.erase(node);
}

size_t UsageAccounting::node_count() const {
  absl::MutexLock lock(&mu_);
  return nodes_.size();
}

absl::flat_hash_map<std::string, std::vector<GpuUsage>> UsageAccounting::Latest() const {
  absl::MutexLock lock(&mu_);
  absl::flat_hash_map<std::string, std::vector<GpuUsage>> latest;
  for (const auto& [node, samples] : nodes_) latest[node] = samples.samples;
  return latest;
}

std::map<std::string, std::pair<double, double>> UsageAccounting::SecondsByClass() const {
  absl::MutexLock lock(&mu_);
  return seconds_;
}

}  // namespace wsched::scheduler
