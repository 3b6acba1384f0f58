#include "server/replica/live_workspace_facts.h"

namespace wsched::replica {

std::optional<absl::Time> LiveWorkspaceFacts::Apply(const store::WorkspaceRow& row, bool live) {
  const core::Workspace& w = row.workspace;
  std::optional<absl::Time> ended;
  const bool placed = w.state == core::WorkspaceState::kPlaced && !row.released;
  auto open = placed_at_.find(w.id);
  if (open != placed_at_.end() && (!placed || open->second != w.placed_at)) {
    ended = open->second;
    placed_at_.erase(open);
  }
  if (placed) placed_at_[w.id] = w.placed_at;
  if (!live) {
    class_of_.erase(w.id);
    idle_.erase(w.id);
    return ended;
  }
  class_of_[w.id] = w.class_id;
  if (w.idle) {
    idle_[w.id] = {*w.idle, w.org_id, w.project_id, core::HeldGpuSevenths(w)};
  } else {
    idle_.erase(w.id);
  }
  return ended;
}

void LiveWorkspaceFacts::Clear() {
  class_of_.clear();
  idle_.clear();
  // Placements that ended while the replica fell behind are dropped
  // uncharged for their last stretch (the accounting forgets them within
  // the hour); those still placed come back as the reload applies them.
  placed_at_.clear();
}

std::string LiveWorkspaceFacts::ClassOf(const std::string& id) const {
  auto it = class_of_.find(id);
  return it == class_of_.end() ? "unknown" : it->second;
}

std::optional<core::IdleMark> LiveWorkspaceFacts::IdleMarkOf(const std::string& id) const {
  auto it = idle_.find(id);
  if (it == idle_.end()) return std::nullopt;
  return it->second.mark;
}

absl::Time LiveWorkspaceFacts::PlacedAt(const std::string& id) const {
  auto it = placed_at_.find(id);
  return it == placed_at_.end() ? absl::InfinitePast() : it->second;
}

}  // namespace wsched::replica
