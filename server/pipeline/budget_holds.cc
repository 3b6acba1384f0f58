#include "server/pipeline/budget_holds.h"

#include <algorithm>

namespace wsched::pipeline {

void BudgetHolds::Refused(const std::string& id, Versions versions, absl::Time now,
                          std::optional<absl::Duration> resets_in) {
  const absl::Duration wait = std::min(resets_in.value_or(kBudgetRecheck), kBudgetRecheck);
  holds_[id] = Hold{versions, now + wait};
}

bool BudgetHolds::Holds(const std::string& id, Versions versions, absl::Time now) {
  auto it = holds_.find(id);
  if (it == holds_.end()) return false;
  if (it->second.versions == versions && now < it->second.until) return true;
  holds_.erase(it);
  return false;
}

}  // namespace wsched::pipeline
