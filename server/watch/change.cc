#include "server/watch/change.h"

#include "absl/strings/str_cat.h"

namespace wsched::watch {
namespace {

What WhatOf(const Happened& happened) {
  if (!happened.after) return What::kDeleted;
  switch (happened.after->state) {
    case core::WorkspaceState::kPending: return What::kPending;
    case core::WorkspaceState::kStopped: return What::kStopped;
    case core::WorkspaceState::kLost: return What::kLost;
    case core::WorkspaceState::kPlaced:
      // Placed before and after: only its event (an idle or budget mark)
      // changes a placement.
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

namespace {

// The keys a workspace described by `facts` may be filed under.
void KeysOf(const Facts &facts, absl::flat_hash_set<std::string> &keys) {
  if (!facts.state)
    return;
  if (!facts.node.empty())
    keys.insert(absl::StrCat("node:", facts.node));
  keys.insert(absl::StrCat("project:", facts.project_id));
  if (!facts.pool.empty())
    keys.insert(absl::StrCat("pool:", facts.pool));
  keys.insert(absl::StrCat("class:", facts.class_id));
  keys.insert(absl::StrCat("org:", facts.org_id));
}

} // namespace

std::string IndexKeyOf(const Filter &filter) {
  if (!filter.node.empty())
    return absl::StrCat("node:", filter.node);
  if (!filter.project_id.empty())
    return absl::StrCat("project:", filter.project_id);
  if (!filter.pool.empty())
    return absl::StrCat("pool:", filter.pool);
  if (!filter.class_id.empty())
    return absl::StrCat("class:", filter.class_id);
  if (!filter.org_id.empty())
    return absl::StrCat("org:", filter.org_id);
  return "*";
}

void KeysOf(const Happened &happened, absl::flat_hash_set<std::string> &keys) {
  KeysOf(happened.before, keys);
  if (happened.after)
    KeysOf(FactsOf(*happened.after), keys);
}

}  // namespace wsched::watch
