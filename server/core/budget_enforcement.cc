#include "server/core/budget_enforcement.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace wsched::core {
namespace {

bool OfPlacement(const BudgetedWorkspace& w) {
  return w.mark && MarkOfPlacement(*w.mark, w.placed_at);
}

BudgetMark WarningMark(const ScopeSpending& spending, absl::Time placed_at, absl::Time now) {
  BudgetMark mark;
  mark.kind = BudgetMark::Kind::kWarning;
  mark.scope = spending.scope;
  mark.placed_at = placed_at;
  mark.stops_at = now + StopWarningOf(spending.limit);
  mark.spent = spending.spent;
  mark.limit = GpuMicrosOf(spending.limit);
  mark.period_end = spending.period.end;
  return mark;
}

}  // namespace

std::string BudgetScope(absl::string_view kind, absl::string_view id) {
  return absl::StrCat(kind, ":", id);
}

bool LimitReached(const ScopeSpending& spending) {
  return spending.spent >= GpuMicrosOf(spending.limit);
}

bool HasWarningOfPlacement(const BudgetedWorkspace& w) {
  return OfPlacement(w) && w.mark->kind == BudgetMark::Kind::kWarning;
}

std::vector<BudgetStep> DecideBudgetStops(const ScopeSpending& spending,
                                          const std::vector<BudgetedWorkspace>& running,
                                          absl::Time now) {
  std::vector<BudgetStep> steps;
  const bool stops = spending.limit.action == SpendingAction::kBlockAndStop;
  const bool reached = stops && LimitReached(spending);
  for (const BudgetedWorkspace& w : running) {
    const bool warned = HasWarningOfPlacement(w);
    const bool ours = warned && w.mark->scope == spending.scope;
    if (!reached) {
      if (ours) steps.push_back({BudgetStep::Kind::kClear, w.id, w.version, std::nullopt});
      continue;
    }
    if (!warned) {
      steps.push_back(
          {BudgetStep::Kind::kWarn, w.id, w.version, WarningMark(spending, w.placed_at, now)});
    } else if (ours && w.mark->stops_at <= now) {
      steps.push_back({BudgetStep::Kind::kStop, w.id, w.version, std::nullopt});
    }
  }
  return steps;
}

std::vector<BudgetStep> ClearOrphanWarnings(const std::vector<BudgetedWorkspace>& warned,
                                            const std::vector<std::string>& stopping_scopes) {
  std::vector<BudgetStep> steps;
  for (const BudgetedWorkspace& w : warned) {
    if (!HasWarningOfPlacement(w)) continue;
    if (std::find(stopping_scopes.begin(), stopping_scopes.end(), w.mark->scope) !=
        stopping_scopes.end()) {
      continue;
    }
    steps.push_back({BudgetStep::Kind::kClear, w.id, w.version, std::nullopt});
  }
  return steps;
}

std::vector<int> ThresholdsToTell(const ScopeSpending& spending, const std::vector<int>& told) {
  std::vector<int> out;
  for (int percent : CrossedPercents(spending.limit.warn_at_percent, spending.spent,
                                     GpuMicrosOf(spending.limit))) {
    if (std::find(told.begin(), told.end(), percent) == told.end()) out.push_back(percent);
  }
  return out;
}

BudgetMark ThresholdMark(const ScopeSpending& spending, int percent, absl::Time placed_at) {
  BudgetMark mark;
  mark.kind = BudgetMark::Kind::kThreshold;
  mark.scope = spending.scope;
  mark.placed_at = placed_at;
  mark.percent = percent;
  mark.spent = spending.spent;
  mark.limit = GpuMicrosOf(spending.limit);
  mark.period_end = spending.period.end;
  return mark;
}

double UsedRatio(const ScopeSpending& spending) {
  const int64_t limit = GpuMicrosOf(spending.limit);
  if (limit <= 0) return 0;
  return static_cast<double>(spending.spent) / static_cast<double>(limit);
}

}  // namespace wsched::core
