// Hands each committed change of a kind of record (batch.h: workspaces,
// nodes) to the streams whose filters it matches, in version order,
// without ever waiting on one (docs/architecture.md "The workspace
// stream"). Streams are indexed by their most selective field (the kind's
// IndexKeyOf: for workspaces node, project, pool, class, org; for nodes
// node, pool), so a change costs a lookup per key (KeysOf) and a check per
// stream that could match, not one per stream.
//
// The fanout owns its position (the last version handed out), the members
// and their index, under its one lock. A subscriber buffers what it is
// handed and ends itself when its buffer is full (outbox.h); it never calls
// back into the fanout from Deliver.
#ifndef WSCHED_SERVER_WATCH_FANOUT_H_
#define WSCHED_SERVER_WATCH_FANOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/watch/batch.h"
#include "server/watch/change.h"
#include "server/watch/filter.h"
#include "server/watch/node_change.h"

namespace wsched::watch {

template <typename K> class BasicSubscriber {
public:
  virtual ~BasicSubscriber() = default;
  // Called under the fanout's lock, in version order: must neither block
  // nor call the fanout.
  virtual void Deliver(BasicBatch<K> batch) = 0;
  // The fanout can no longer serve it (it fell behind the change log): it
  // is no member any more and should end with `why`.
  virtual void Abandon(absl::Status why) = 0;
};

template <typename K> class BasicFanout {
public:
  using Id = int64_t;
  using Filter = typename K::Filter;
  using Entry = BasicEntry<K>;
  using Subscriber = BasicSubscriber<K>;

  explicit BasicFanout(absl::Duration bookmark_every)
      : bookmark_every_(bookmark_every) {}
  BasicFanout(const BasicFanout &) = delete;
  BasicFanout &operator=(const BasicFanout &) = delete;

  // Joins when the subscriber has everything up to the fanout's position
  // (`after` >= position): from then on it is handed every matching entry
  // after `after`. Otherwise returns no id and the position it must first
  // read the log up to.
  struct Joined {
    std::optional<Id> id;
    int64_t position = 0;
  };
  Joined Join(Subscriber* subscriber, Filter filter, int64_t after, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);
  // After it returns the subscriber is never called again (no-op when it
  // was abandoned).
  void Leave(Id id) ABSL_LOCKS_EXCLUDED(mu_);

  // Hands out `entries`, which must follow the position without a gap.
  void Publish(const std::vector<Entry>& entries, absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves the position to `version` with nothing to hand out: only while
  // nobody is subscribed (false otherwise), as nobody then needs the entries.
  bool SkipTo(int64_t version) ABSL_LOCKS_EXCLUDED(mu_);
  // The log no longer reaches back to the position: abandons, with `why`,
  // every member that has less than `oldest` (the oldest version the log
  // can continue from), and moves the position there.
  void Rebase(const absl::Status& why, int64_t oldest) ABSL_LOCKS_EXCLUDED(mu_);
  // Tells each member that was handed nothing for bookmark_every the
  // position (a kBookmark batch), so a quiet stream's resume point stays
  // inside the log's retention. Paced: it looks at most every
  // bookmark_every / kSweepsPerInterval, and tells at most twice the
  // members per bookmark_every, prorated to the time since the last look
  // (at least 64). Streams that went quiet together (all that one change
  // reached) would otherwise all be due in the same call, and thousands of
  // writes under the fanout's lock would hold back every change behind
  // them. Those left over are told at a later look, within about 1.5 x
  // bookmark_every however often it is called.
  void Bookmark(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  static constexpr int kSweepsPerInterval = 100;

  int64_t position() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Member {
    Subscriber* subscriber = nullptr;
    Filter filter;
    std::string key;        // Its index key.
    int64_t last_sent = 0;  // The version it has; entries up to it are skipped.
    absl::Time last_sent_at;
  };

  void HandOutLocked(const Entry& entry, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CandidatesLocked(const typename K::Happened &happened,
                        absl::flat_hash_set<Id> &out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Members to tell at a look `since` the last: twice the members per
  // interval, so bookmarks keep up with every member being due once per
  // interval.
  size_t BookmarksPerSweepLocked(absl::Duration since) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration bookmark_every_;
  mutable absl::Mutex mu_;
  absl::Time last_sweep_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t position_ ABSL_GUARDED_BY(mu_) = 0;
  Id next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<Id, Member> members_ ABSL_GUARDED_BY(mu_);
  // Index key ("node:n7", "project:p1", ..., "*") -> members filed under it.
  absl::flat_hash_map<std::string, absl::flat_hash_set<Id>> index_ ABSL_GUARDED_BY(mu_);
};

// Defined in fanout.cc for the two kinds.
extern template class BasicFanout<WorkspaceKind>;
extern template class BasicFanout<NodeKind>;

using Subscriber = BasicSubscriber<WorkspaceKind>;
using Fanout = BasicFanout<WorkspaceKind>;
using NodeSubscriber = BasicSubscriber<NodeKind>;
using NodeFanout = BasicFanout<NodeKind>;

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_FANOUT_H_
