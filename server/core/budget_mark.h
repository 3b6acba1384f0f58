// What a spending limit has told a running workspace (docs/billing.md
// "Spending limits"): a warning that it is stopped at stops_at
// (block_and_stop), or a threshold of the limit reached. Kept on the
// workspace's record so that every replica's watchers see it.
#ifndef WSCHED_SERVER_CORE_BUDGET_MARK_H_
#define WSCHED_SERVER_CORE_BUDGET_MARK_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace wsched::core {

struct BudgetMark {
  enum class Kind { kWarning, kThreshold };
  Kind kind = Kind::kWarning;
  // "org:<id>" or "project:<id>": whose limit.
  std::string scope;
  // The placement it was written for: a restarted workspace's new
  // placement does not carry its previous one's mark.
  absl::Time placed_at = absl::InfinitePast();
  // kWarning: when the workspace is stopped.
  absl::Time stops_at = absl::InfinitePast();
  // kThreshold: the percent reached.
  int percent = 0;
  // GPU-microseconds spent in the period and the limit, when written.
  int64_t spent = 0;
  int64_t limit = 0;
  absl::Time period_end = absl::InfinitePast();
  friend bool operator==(const BudgetMark&, const BudgetMark&) = default;
};

// Whether `mark` was written for the placement that started at `placed_at`.
// Within a millisecond: some reads carry placed_at through a float of
// epoch seconds, which may be a microsecond off; two placements of one
// workspace are a stop and a placement apart, far more than that.
inline bool MarkOfPlacement(const BudgetMark& mark, absl::Time placed_at) {
  return absl::AbsDuration(mark.placed_at - placed_at) < absl::Milliseconds(1);
}

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_BUDGET_MARK_H_
