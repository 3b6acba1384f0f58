#include "server/usage/usage_accounting.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"

namespace wsched::usage {

namespace {

double UtilizationOf(const std::vector<GpuUsage>& samples, const std::string& uuid) {
  for (const GpuUsage& sample : samples) {
    if (sample.uuid == uuid) return sample.utilization_percent / 100.0;
  }
  return 0;
}

}  // namespace

void UsageAccounting::ChargeHoldersLocked(const std::string& node, const std::string& pool,
                                          const std::vector<GpuUsage>& previous_samples,
                                          absl::Time previous, const GpuHolders& holders,
                                          absl::Time now) {
  // Each placement once, however many GPUs it holds here: its interval,
  // its entry and its counters are looked up for its first GPU only (a
  // node's holders are few: a linear look-up, nothing allocated).
  struct Placement {
    const std::string* workspace;
    Charging* charging;  // Null: ended, charged no more.
    absl::Time from;
    Seconds* charged;  // Its counters, once it is charged something.
    bool first_sight;  // Its GPUs are noted now.
  };
  absl::InlinedVector<Placement, 8> seen;
  for (const auto& [uuid, holder] : holders) {
    Placement* p = nullptr;
    for (Placement& candidate : seen) {
      if (*candidate.workspace == holder.workspace) p = &candidate;
    }
    if (p == nullptr) {
      p = &seen.emplace_back(Placement{&holder.workspace, nullptr, now, nullptr, false});
      if (auto ended = ended_.find(holder.workspace);
          ended != ended_.end() && ended->second.first == holder.placed_at) {
        continue;  // Ended (and charged to its end) after this sample's holders were read.
      }
      auto [it, fresh] = charging_.try_emplace(holder.workspace);
      Charging& c = it->second;
      if (fresh || c.placed_at != holder.placed_at) {
        // Seen for the first time: charged from its placement or the
        // node's previous sample, whichever is later; a node's first
        // sample only starts the clock.
        c = {holder.placed_at, {pool, holder.class_id}, node, {},
             previous == absl::InfinitePast() ? now : std::max(previous, holder.placed_at)};
        p->first_sight = true;
      }
      p->charging = &c;
      p->from = std::max(c.until, holder.placed_at);
      c.until = now;
    }
    if (p->charging == nullptr) continue;
    if (p->first_sight) p->charging->gpus.push_back(uuid);
    const double seconds = absl::ToDoubleSeconds(now - p->from);
    if (seconds <= 0) continue;
    if (p->charged == nullptr) p->charged = &seconds_[p->charging->pool_class];
    p->charged->held += seconds;
    p->charged->busy += seconds * UtilizationOf(previous_samples, uuid);
  }
}

void UsageAccounting::EndPlacement(const std::string& workspace, absl::Time placed_at,
                                   absl::Time ended_at) {
  absl::MutexLock lock(&mu_);
  ended_[workspace] = {placed_at, ended_at};
  auto it = charging_.find(workspace);
  if (it != charging_.end() && it->second.placed_at == placed_at) {
    const Charging& c = it->second;
    const double seconds = absl::ToDoubleSeconds(ended_at - c.until);
    if (seconds > 0) {
      // Busy at the utilization of the node's latest samples of its GPUs,
      // as every interval is charged at its first sample's.
      double busy_ratio = 0;
      if (auto node = nodes_.find(c.node); node != nodes_.end()) {
        for (const std::string& uuid : c.gpus) busy_ratio += UtilizationOf(node->second.samples, uuid);
      }
      Seconds& charged = seconds_[c.pool_class];
      charged.held += seconds * static_cast<double>(c.gpus.size());
      charged.busy += seconds * busy_ratio;
    }
    charging_.erase(it);
  }
  PruneLocked(ended_at);
}

void UsageAccounting::PruneLocked(absl::Time now) {
  if (now - pruned_at_ < absl::Minutes(1)) return;
  pruned_at_ = now;
  const absl::Time horizon = now - absl::Hours(1);
  absl::erase_if(charging_, [&](const auto& entry) { return entry.second.until < horizon; });
  absl::erase_if(ended_, [&](const auto& entry) { return entry.second.second < horizon; });
}

void UsageAccounting::Record(const std::string& node, const std::string& pool,
                             std::vector<GpuUsage> samples, const GpuHolders& holders) {
  const absl::Time now = clock_();
  {
    absl::MutexLock lock(&mu_);
    NodeSamples& previous = nodes_[node];
    ChargeHoldersLocked(node, pool, previous.samples,
                        previous.at == absl::Time() ? absl::InfinitePast() : previous.at, holders,
                        now);
    PruneLocked(now);
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

}  // namespace wsched::usage
