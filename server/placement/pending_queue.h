// Workspaces waiting for capacity. Order: higher priority first; within a
// priority, orgs take turns (round-robin by the age of their oldest entry)
// and each org's entries stay FIFO, so one org's burst cannot starve the
// others. Pure: the caller holds the lock.
#ifndef WSCHED_SERVER_PLACEMENT_PENDING_QUEUE_H_
#define WSCHED_SERVER_PLACEMENT_PENDING_QUEUE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/time/time.h"

namespace wsched::placement {

struct PendingEntry {
  std::string workspace;
  std::string org;
  std::string class_id;
  int priority = 0;
  absl::Time since;
  std::string reason;              // Why it waits.
  std::vector<std::string> pools;  // Pools that would hold it, preferred first.
  std::string project;             // For the class policy at drain time.
};

class PendingQueue {
 public:
  // Adds or replaces (keeping its place in line when already queued).
  void Upsert(PendingEntry entry);
  bool Remove(const std::string& workspace);
  const PendingEntry* Find(const std::string& workspace) const;
  size_t size() const { return entries_.size(); }

  // Everything in service order.
  std::vector<const PendingEntry*> Ordered() const;
  // The same order, one entry at a time, until `visit` returns false: a
  // caller that needs only the head of a long queue does not pay for all of
  // it. The queue must not change while it is visited.
  void ForEachOrdered(absl::FunctionRef<bool(const PendingEntry&)> visit) const;
  // 1-based position in service order; 0 when not queued.
  int Position(const std::string& workspace) const;

 private:
  struct Slot {
    PendingEntry entry;
    int64_t sequence;  // Arrival order.
  };
  // Each org's entries by arrival (sequence -> workspace).
  using OrgLine = absl::btree_map<int64_t, std::string>;

  void Index(const Slot& slot);
  void Unindex(const Slot& slot);

  absl::flat_hash_map<std::string, Slot> entries_;
  // The service order kept as entries come and go, so that Ordered() merges
  // the orgs' lines instead of sorting the whole queue: by priority (highest
  // first), then by org.
  std::map<int, absl::flat_hash_map<std::string, OrgLine>, std::greater<>> lines_;
  int64_t next_sequence_ = 0;
};

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_PENDING_QUEUE_H_
