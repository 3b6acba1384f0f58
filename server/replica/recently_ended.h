// Versions of workspaces that ended lately (stopped, or lost and released),
// kept for a bounded window after the replica stops mirroring them.
//
// The change feed reaches a replica after its own mirror: the entry of a stop
// this replica just committed arrives a moment later. Without the ended
// version that entry would look new and cost a read of the row. Beyond the
// window an entry is only a wasted read, never a wrong state (the row read is
// the database's newest), so the window is bounded by age and by count and
// memory stays bounded by what is live plus what ended in the last moments.
// Pure: the caller holds the lock.
#ifndef WSCHED_SERVER_REPLICA_RECENTLY_ENDED_H_
#define WSCHED_SERVER_REPLICA_RECENTLY_ENDED_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace wsched::replica {

class RecentlyEnded {
 public:
  struct Limits {
    absl::Duration keep_for = absl::Seconds(10);
    size_t max_entries = 32768;
  };
  explicit RecentlyEnded(Limits limits) : limits_(limits) {}

  // `id` ended at `version`; drops what fell out of the window by `now`.
  void Add(const std::string& id, int64_t version, absl::Time now);
  // `id` is live again (or its version is to be re-learned from the database).
  void Forget(const std::string& id) { versions_.erase(id); }
  // The ended version; 0 when `id` is not in the window.
  int64_t VersionOf(const std::string& id) const;
  // Drops entries older than keep_for.
  void Expire(absl::Time now);
  size_t size() const { return versions_.size(); }

 private:
  struct Entry {
    std::string id;
    int64_t version;
    absl::Time at;
  };
  void PopOldest();

  const Limits limits_;
  // Oldest first. An entry whose id was forgotten or ended again later is
  // stale: popping it leaves the newer version alone.
  std::deque<Entry> order_;
  absl::flat_hash_map<std::string, int64_t> versions_;
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_RECENTLY_ENDED_H_
