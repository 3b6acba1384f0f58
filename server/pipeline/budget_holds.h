// Queued workspaces a spending limit refused at the commit, set aside by
// the queue drain (docs/billing.md "Spending limits"). A refused workspace
// would otherwise be decided first at every drain and hold the room it
// chose until its commit fails again, so a workspace behind it that the
// limit does not cover would never get that room.
//
// Set aside until one of: its project's or org's settings change (a limit
// raised or removed), the refusal's period resets, or kBudgetRecheck
// passes (spending can also fall: a rolling window moves on, a workspace
// stopped inside its first interval counts less). Pure: the caller passes
// the settings versions and the time; it locks.
#ifndef WSCHED_SERVER_PIPELINE_BUDGET_HOLDS_H_
#define WSCHED_SERVER_PIPELINE_BUDGET_HOLDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace wsched::pipeline {

inline constexpr absl::Duration kBudgetRecheck = absl::Minutes(1);

class BudgetHolds {
 public:
  // The settings versions a refusal was judged by.
  struct Versions {
    int64_t project = 0;
    int64_t org = 0;
    friend bool operator==(const Versions&, const Versions&) = default;
  };

  // `id` was refused at `now`; `resets_in` is the refusal's retry delay
  // (the period's end), when it has one.
  void Refused(const std::string& id, Versions versions, absl::Time now,
               std::optional<absl::Duration> resets_in);
  // Whether `id` stays aside now, with the settings at `versions`; a hold
  // that no longer applies is dropped.
  bool Holds(const std::string& id, Versions versions, absl::Time now);
  // Drops the holds of workspaces not in the queue any more.
  template <typename IsQueued>
  void Keep(IsQueued is_queued) {
    absl::erase_if(holds_, [&](const auto& entry) { return !is_queued(entry.first); });
  }
  size_t size() const { return holds_.size(); }

 private:
  struct Hold {
    Versions versions;
    absl::Time until;
  };
  absl::flat_hash_map<std::string, Hold> holds_;
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_BUDGET_HOLDS_H_
