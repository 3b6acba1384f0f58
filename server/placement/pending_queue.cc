#include "server/placement/pending_queue.h"

#include <algorithm>
#include <map>

namespace wsched::placement {

void PendingQueue::Upsert(PendingEntry entry) {
  auto it = entries_.find(entry.workspace);
  if (it != entries_.end()) {
    it->second.entry = std::move(entry);
    return;
  }
  std::string key = entry.workspace;
  entries_.emplace(std::move(key), Slot{std::move(entry), next_sequence_++});
}

bool PendingQueue::Remove(const std::string& workspace) { return entries_.erase(workspace) > 0; }

const PendingEntry* PendingQueue::Find(const std::string& workspace) const {
  auto it = entries_.find(workspace);
  return it == entries_.end() ? nullptr : &it->second.entry;
}

std::vector<const PendingEntry*> PendingQueue::Ordered() const {
  // priority (desc) -> org -> that org's entries by arrival.
  std::map<int, std::map<std::string, std::vector<const Slot*>>, std::greater<>> tiers;
  for (const auto& [id, slot] : entries_) tiers[slot.entry.priority][slot.entry.org].push_back(&slot);
  std::vector<const PendingEntry*> ordered;
  ordered.reserve(entries_.size());
  for (auto& [priority, orgs] : tiers) {
    std::vector<std::vector<const Slot*>*> queues;
    for (auto& [org, slots] : orgs) {
      std::sort(slots.begin(), slots.end(),
                [](const Slot* a, const Slot* b) { return a->sequence < b->sequence; });
      queues.push_back(&slots);
    }
    // Each round serves every org once, oldest head first.
    for (size_t round = 0;; ++round) {
      std::vector<const Slot*> heads;
      for (auto* queue : queues) {
        if (round < queue->size()) heads.push_back((*queue)[round]);
      }
      if (heads.empty()) break;
      std::sort(heads.begin(), heads.end(),
                [](const Slot* a, const Slot* b) { return a->sequence < b->sequence; });
      for (const Slot* slot : heads) ordered.push_back(&slot->entry);
    }
  }
  return ordered;
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
