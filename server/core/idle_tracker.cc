#include "server/core/idle_tracker.h"

#include <algorithm>

namespace wsched::core {

bool IdleTracker::AllBelow(absl::Span<const std::optional<int>> utilization, int threshold) {
  // No GPU at all is not "every GPU idle": there is nothing to judge.
  if (utilization.empty()) return false;
  return std::all_of(utilization.begin(), utilization.end(), [threshold](const auto& percent) {
    return percent.has_value() && *percent < threshold;
  });
}

void IdleTracker::Observe(const std::string& workspace, const IdlePolicy& policy,
                          absl::Span<const std::optional<int>> utilization, absl::Time at) {
  Entry& entry = entries_[workspace];
  if (at < entry.last_sample) return;  // An older heartbeat that arrived late says nothing new.
  // A gap longer than stale_after is a stretch nobody saw: count from here.
  const bool gap = entry.last_sample != absl::InfinitePast() && at - entry.last_sample > stale_after_;
  if (entry.policy != policy || gap) entry.idle_since.reset();
  entry.policy = policy;
  entry.last_sample = at;
  if (!AllBelow(utilization, policy.utilization_below_percent)) {
    entry.idle_since.reset();
  } else if (!entry.idle_since) {
    entry.idle_since = at;
  }
}

IdleTracker::Verdict IdleTracker::At(const std::string& workspace, absl::Time now) const {
  auto it = entries_.find(workspace);
  if (it == entries_.end()) return {};
  const Entry& entry = it->second;
  if (!entry.idle_since || now - entry.last_sample > stale_after_) return {};
  const IdlePolicy& policy = entry.policy;
  Verdict verdict;
  verdict.idle_since = *entry.idle_since;
  if (policy.action == IdleAction::kStop) verdict.stops_at = verdict.idle_since + policy.idle_for;
  const absl::Duration idle = now - verdict.idle_since;
  if (verdict.stops_at && now >= *verdict.stops_at) {
    verdict.phase = Phase::kStopDue;
  } else if (idle >= policy.announce_after()) {
    verdict.phase = Phase::kIdle;
  } else {
    verdict.phase = Phase::kCounting;
  }
  return verdict;
}

std::vector<std::string> IdleTracker::Prune(absl::Time now) {
  std::vector<std::string> pruned;
  for (const auto& [workspace, entry] : entries_) {
    if (now - entry.last_sample > stale_after_) pruned.push_back(workspace);
  }
  for (const std::string& workspace : pruned) entries_.erase(workspace);
  return pruned;
}

std::vector<std::string> IdleTracker::Tracked() const {
  std::vector<std::string> ids;
  ids.reserve(entries_.size());
  for (const auto& [workspace, entry] : entries_) ids.push_back(workspace);
  return ids;
}

const IdlePolicy* IdleTracker::PolicyOf(const std::string& workspace) const {
  auto it = entries_.find(workspace);
  return it == entries_.end() ? nullptr : &it->second.policy;
}

const char* IdlePhaseName(IdleTracker::Phase phase) {
  switch (phase) {
    case IdleTracker::Phase::kActive:
      return "active";
    case IdleTracker::Phase::kCounting:
      return "counting";
    case IdleTracker::Phase::kIdle:
      return "idle";
    case IdleTracker::Phase::kStopDue:
      return "stop_due";
  }
  return "active";
}

}  // namespace wsched::core
