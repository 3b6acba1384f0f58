#include "server/simulate/engine_internal.h"

#include <string>

#include "server/core/mig_profiles.h"

namespace wsched::simulate::internal {

void Engine::Spending(const Live& w, bool started, absl::Time now) {
  const std::string& org = trace_[w.arrival].org;
  if (!budgets_.Limited(org)) return;
  if (started) {
    budgets_.Started(org, w.id, core::LeastGpuSevenths(*w.cls), now);
  } else {
    budgets_.Ended(org, w.id, now);
  }
  ExpectReach(org, now);
}

void Engine::ExpectReach(const std::string& org, absl::Time now) {
  const int64_t generation = ++reach_generation_[org];
  if (std::optional<absl::Time> at = budgets_.NextReach(org, now)) {
    Schedule(std::max(*at, now), Kind::kBudgetReach, limited_index_.at(org), generation);
  }
}

void Engine::BudgetReach(size_t index, int64_t generation, absl::Time now) {
  const std::string& org = limited_[index];
  if (generation != reach_generation_[org]) return;  // The rate changed since.
  if (!budgets_.Reached(org, now)) {
    ExpectReach(org, now);  // Rounding: a moment early.
    return;
  }
  budgets_.Warn(org);
  Schedule(now + core::StopWarningOf(input_.org_limits.at(org)), Kind::kBudgetStop, index);
}

void Engine::BudgetStop(size_t index, absl::Time now) {
  const std::string& org = limited_[index];
  if (budgets_.StopDue(org, now)) {
    for (const std::string& id : budgets_.Running(org)) {
      budgets_.Stopped(org);
      End(IndexOf(id), now);
    }
  }
  ExpectReach(org, now);
}

bool Engine::WithinBudget(const Live& w, absl::Time now) {
  const std::string& org = trace_[w.arrival].org;
  if (budgets_.Admits(org, core::LeastGpuSevenths(*w.cls), now)) return true;
  budgets_.HeldBack(org, w.id);
  auto [it, fresh] = retry_at_.try_emplace(org, budgets_.PeriodEnd(org, now));
  if (fresh) Schedule(it->second, Kind::kBudgetRetry, limited_index_.at(org));
  return false;
}

}  // namespace wsched::simulate::internal
