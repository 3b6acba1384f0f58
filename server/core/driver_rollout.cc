#include "server/core/driver_rollout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace wsched::core {
namespace {

bool InFlight(const RolloutNode& node) {
  return node.released && (node.state == DriverState::kNeedsDriver ||
                           node.state == DriverState::kInstalling ||
                           node.state == DriverState::kInstallFailed);
}

}  // namespace

RolloutCounts CountRollout(const std::vector<RolloutNode>& nodes) {
  RolloutCounts counts;
  for (const RolloutNode& node : nodes) {
    if (node.state == DriverState::kOutdated) ++counts.waiting;
    if (InFlight(node)) {
      ++counts.in_flight;
      if (node.state == DriverState::kInstallFailed) ++counts.failed;
    }
  }
  return counts;
}

namespace {

// Outdated nodes, fewest workspaces first, then by name.
std::vector<const RolloutNode*> Candidates(const std::vector<RolloutNode>& nodes) {
  std::vector<const RolloutNode*> out;
  for (const RolloutNode& node : nodes) {
    if (node.state == DriverState::kOutdated) out.push_back(&node);
  }
  std::sort(out.begin(), out.end(), [](const RolloutNode* a, const RolloutNode* b) {
    if (a->workspaces != b->workspaces) return a->workspaces < b->workspaces;
    return a->name < b->name;
  });
  return out;
}

const RolloutNode* Find(const std::vector<RolloutNode>& nodes, const std::string& name) {
  for (const RolloutNode& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

void Release(RolloutStep& step, const RolloutNode& node) {
  step.release.push_back(node.name);
  --step.counts.waiting;
  ++step.counts.in_flight;
}

}  // namespace

RolloutStep PlanRollout(const DriverRollout& settings, const std::vector<RolloutNode>& nodes,
                        std::optional<RolloutRecord> record) {
  RolloutStep step;
  step.counts = CountRollout(nodes);
  if (step.counts.waiting == 0 && step.counts.in_flight == 0) {
    // Done, or none: only a pause is kept.
    if (record && record->paused) step.record = RolloutRecord{"", true, record->reason, false};
    return step;
  }
  RolloutRecord next = record.value_or(RolloutRecord{});
  const RolloutNode* canary = next.canary.empty() ? nullptr : Find(nodes, next.canary);
  if (canary != nullptr && canary->state == DriverState::kInstallFailed) {
    if (!next.canary_failure_seen) {
      next.canary_failure_seen = true;
      next.paused = true;
      next.reason = absl::StrCat("canary ", canary->name, " failed: ", canary->detail);
      step.stopped_now = true;
    }
  } else if (canary != nullptr) {
    next.canary_failure_seen = false;  // It installs again: a new failure stops again.
  }
  step.record = next;
  if (next.paused) return step;
  std::vector<const RolloutNode*> candidates = Candidates(nodes);
  if (canary == nullptr) {
    // No canary yet, or it left the pool: the next one released is it.
    if (candidates.empty()) return step;
    step.record->canary = candidates.front()->name;
    Release(step, *candidates.front());
    return step;
  }
  if (InFlight(*canary)) return step;  // The canary goes alone.
  const int budget = std::max(settings.max_unavailable, 1) - step.counts.in_flight;
  for (int i = 0; i < budget && i < static_cast<int>(candidates.size()); ++i) {
    Release(step, *candidates[i]);
  }
  return step;
}

bool InstallMayStart(const DriverHistory& history, const NodeInfo& node,
                     const std::string& wanted_driver, int workspaces,
                     const DriverRollout& settings, absl::Time now) {
  const bool rollout_release = history.verified_kernel == node.kernel_version &&
                               history.released_driver == wanted_driver;
  if (!rollout_release || workspaces == 0) return true;
  if (settings.drain_deadline <= absl::ZeroDuration()) return false;
  return now >= history.released_at + settings.drain_deadline;
}

}  // namespace wsched::core
