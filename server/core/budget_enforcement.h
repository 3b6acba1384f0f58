// What a spending limit does to the running workspaces of its scope
// (docs/billing.md "Spending limits"), decided from figures read at one
// instant. Pure: every time and amount is given, none is read.
//
// block_and_stop: once spending reaches the limit, each running workspace
// is warned (a BudgetMark of kind kWarning, stops_at = now + the limit's
// stop warning) and stopped once stops_at has passed while spending is
// still at the limit. Spending back under it (the limit raised, a new
// period, a rolling window moving on) clears the warnings the scope wrote.
//
// Thresholds: each of warn_at_percent reached is told to the running
// workspaces once per period; which were told is the caller's to remember.
#ifndef WSCHED_SERVER_CORE_BUDGET_ENFORCEMENT_H_
#define WSCHED_SERVER_CORE_BUDGET_ENFORCEMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/budget_mark.h"
#include "server/core/spending_limit.h"

namespace wsched::core {

// A limited scope and where its spending stands now.
struct ScopeSpending {
  std::string scope;  // "org:<id>" or "project:<id>".
  SpendingLimit limit;
  PeriodBounds period;
  int64_t spent = 0;  // GPU-microseconds in the period, running ones to now.
};

// "org:<id>" or "project:<id>".
std::string BudgetScope(absl::string_view kind, absl::string_view id);

// A running workspace of the scope, as its record stands.
struct BudgetedWorkspace {
  std::string id;
  int64_t version = 0;
  absl::Time placed_at;
  std::optional<BudgetMark> mark;  // As stored, for whichever placement.
};

struct BudgetStep {
  enum class Kind {
    kWarn,   // Write `mark` (a warning).
    kClear,  // Clear the warning the scope wrote.
    kStop,   // Stop it, end reason "budget".
  };
  Kind kind = Kind::kWarn;
  std::string workspace;
  int64_t version = 0;  // The record's version the step is guarded by.
  std::optional<BudgetMark> mark;
};

// Whether `spending` has reached its limit.
bool LimitReached(const ScopeSpending& spending);

// The block_and_stop steps for the running workspaces of one scope. A
// block_new limit only clears the warnings the scope wrote (its action was
// changed). A warning written for another scope, or for a
// previous placement, is that scope's or stale: a reached limit warns
// over a stale one and leaves another scope's alone (it stops the
// workspace at its own time).
std::vector<BudgetStep> DecideBudgetStops(const ScopeSpending& spending,
                                          const std::vector<BudgetedWorkspace>& running,
                                          absl::Time now);

// kClear steps for the warnings of this placement written by a scope not
// in `stopping_scopes` (the scopes with a block_and_stop limit now): its
// limit was removed, so nothing will stop the workspace or clear them.
std::vector<BudgetStep> ClearOrphanWarnings(const std::vector<BudgetedWorkspace>& warned,
                                            const std::vector<std::string>& stopping_scopes);

// The percents of warn_at_percent reached now that are not in `told`
// (those told this period), ascending.
std::vector<int> ThresholdsToTell(const ScopeSpending& spending, const std::vector<int>& told);

// The threshold mark for `percent`, for the workspaces of the scope that
// carry no warning of this placement (a warning says more: it has the same
// figures and when the workspace stops).
BudgetMark ThresholdMark(const ScopeSpending& spending, int percent, absl::Time placed_at);
bool HasWarningOfPlacement(const BudgetedWorkspace& w);

// The fraction of the limit spent (1 at the limit); 0 without a limit.
double UsedRatio(const ScopeSpending& spending);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_BUDGET_ENFORCEMENT_H_
