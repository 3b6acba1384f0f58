#include "server/placement/pending_queue.h"

#include <algorithm>
#include <map>

namespace wsched::placement {

void PendingQueue::Index(const Slot& slot) {
  lines_[slot.entry.priority][slot.entry.org].emplace(slot.sequence, slot.entry.workspace);
}

void PendingQueue::Unindex(const Slot& slot) {
  auto tier = lines_.find(slot.entry.priority);
  auto line = tier->second.find(slot.entry.org);
  line->second.erase(slot.sequence);
  if (line->second.empty()) tier->second.erase(line);
  if (tier->second.empty()) lines_.erase(tier);
}

void PendingQueue::Upsert(PendingEntry entry) {
  auto it = entries_.find(entry.workspace);
  if (it != entries_.end()) {
    // Same place in line; a new priority or org moves it to that line.
    const bool moves = it->second.entry.priority != entry.priority || it->second.entry.org != entry.org;
    if (moves) Unindex(it->second);
    it->second.entry = std::move(entry);
    if (moves) Index(it->second);
    return;
  }
  std::string key = entry.workspace;
  auto [inserted, _] = entries_.emplace(std::move(key), Slot{std::move(entry), next_sequence_++});
  Index(inserted->second);
}

bool PendingQueue::Remove(const std::string& workspace) {
  auto it = entries_.find(workspace);
  if (it == entries_.end()) return false;
  Unindex(it->second);
  entries_.erase(it);
  return true;
}

const PendingEntry* PendingQueue::Find(const std::string& workspace) const {
  auto it = entries_.find(workspace);
  return it == entries_.end() ? nullptr : &it->second.entry;
}

std::vector<const PendingEntry*> PendingQueue::Ordered() const {
  std::vector<const PendingEntry*> ordered;
  ordered.reserve(entries_.size());
  ForEachOrdered([&](const PendingEntry& entry) {
    ordered.push_back(&entry);
    return true;
  });
  return ordered;
}

void PendingQueue::ForEachOrdered(absl::FunctionRef<bool(const PendingEntry&)> visit) const {
  // priority (desc) -> org -> that org's entries by arrival.
  struct Cursor {
    OrgLine::const_iterator next, end;
  };
  std::vector<Cursor> cursors;
  std::vector<std::pair<int64_t, const std::string*>> heads;
  for (const auto& [priority, orgs] : lines_) {
    cursors.clear();
    for (const auto& [org, line] : orgs) cursors.push_back({line.begin(), line.end()});
    // Each round serves every org once, oldest head first.
    while (!cursors.empty()) {
      heads.clear();
      for (Cursor& cursor : cursors) {
        heads.emplace_back(cursor.next->first, &cursor.next->second);
        ++cursor.next;
      }
      std::erase_if(cursors, [](const Cursor& c) { return c.next == c.end; });
      std::sort(heads.begin(), heads.end());
      for (const auto& [sequence, workspace] : heads) {
        if (!visit(entries_.find(*workspace)->second.entry)) return;
      }
    }
  }
}

int PendingQueue::Position(const std::string& workspace) const {
  if (!entries_.contains(workspace)) return 0;
  std::vector<const PendingEntry*> ordered = Ordered();
  for (size_t i = 0; i < ordered.size(); ++i) {
    if (ordered[i]->workspace == workspace) return static_cast<int>(i) + 1;
  }
  return 0;
}

}  // namespace wsched::placement
