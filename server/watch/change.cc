#include "server/watch/change.h"

namespace wsched::watch {
namespace {

What WhatOf(const Happened& happened) {
  if (!happened.after) return What::kDeleted;
  switch (happened.after->state) {
    case core::WorkspaceState::kPending: return What::kPending;
    case core::WorkspaceState::kStopped: return What::kStopped;
    case core::WorkspaceState::kLost: return What::kLost;
    case core::WorkspaceState::kPlaced:
      // Placed before and after: only its idle mark changes a placement.
      return happened.before.state == core::WorkspaceState::kPlaced ? What::kIdleChanged
                                                                    : What::kPlaced;
  }
  return What::kPending;
}

}  // namespace

const char* WhatName(What what) {
  switch (what) {
    case What::kExisting: return "existing";
    case What::kPending: return "pending";
    case What::kPlaced: return "placed";
    case What::kStopped: return "stopped";
    case What::kLost: return "lost";
    case What::kIdleChanged: return "idle_changed";
    case What::kDeleted: return "deleted";
  }
  return "unknown";
}

std::optional<Change>
Classify(const Filter &filter,
         const std::shared_ptr<const Happened> &happened) {
  const bool matched_before = Selects(filter, happened->before);
  const bool matches_after = happened->after && Selects(filter, FactsOf(*happened->after));
  if (!matched_before && !matches_after) return std::nullopt;
  return Change{WhatOf(*happened), matched_before && !matches_after, happened};
}

bool SameChanges(const Batch& a, const Batch& b) {
  if (a.version != b.version || a.changes.size() != b.changes.size()) return false;
  for (size_t i = 0; i < a.changes.size(); ++i) {
    const Change& x = a.changes[i];
    const Change& y = b.changes[i];
    if (x.happened != y.happened || x.what != y.what ||
        x.left_filter != y.left_filter)
      return false;
  }
  return true;
}

std::optional<Batch> BatchFor(const Filter& filter, const Entry& entry) {
  Batch batch{Batch::Kind::kChanges, entry.version, {}, nullptr};
  for (const auto& happened : entry.happened) {
    if (auto change = Classify(filter, happened)) batch.changes.push_back(std::move(*change));
  }
  if (batch.changes.empty()) return std::nullopt;
  return batch;
}

}  // namespace wsched::watch
