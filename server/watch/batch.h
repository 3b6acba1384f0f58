// What every watch stream is made of, whatever kind of record it follows
// (WatchWorkspaces: change.h; WatchNodes: node_change.h). A kind K names
//   K::Happened  one record's change as its transaction committed it
//                (shared, never copied: one per change for every stream),
//   K::What      what a change means to a stream; kExisting is the listing,
//   K::Filter    what a stream follows,
// and the kind's header declares, in this namespace,
//   std::optional<BasicChange<K>> Classify(const K::Filter&,
//                                          const std::shared_ptr<const
//                                          K::Happened>&)
//   std::string IndexKeyOf(const K::Filter&)    (the fanout's index, fanout.h)
//   void KeysOf(const K::Happened&, absl::flat_hash_set<std::string>&)
// The fanout, the outboxes and the history follower are the same for
// every kind. Pure: the same entry gives the same messages on every replica.
#ifndef WSCHED_SERVER_WATCH_BATCH_H_
#define WSCHED_SERVER_WATCH_BATCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace wsched::watch {

// One change-log entry (a version): what it did to records of kind K,
// often nothing (it changed other kinds only).
template <typename K> struct BasicEntry {
  int64_t version = 0;
  std::vector<std::shared_ptr<const typename K::Happened>> happened;
};

// A change as one filter's stream tells it.
template <typename K> struct BasicChange {
  typename K::What what = K::What::kExisting;
  bool left_filter = false; // It matched before the change and does not after.
  std::shared_ptr<const typename K::Happened> happened;
};

// Where the transport keeps what it made of a batch (its wire bytes), so
// that the streams handed the same batch share one encoding. Copies of a
// batch share their memo; the fanout hands streams whose changes are the
// same copies of one batch.
struct EncodingMemo {
  absl::Mutex mu;
  std::shared_ptr<const void> encoded ABSL_GUARDED_BY(mu);
};

enum class BatchKind { kExisting, kSynced, kChanges, kBookmark };

// One message of a stream.
template <typename K> struct BasicBatch {
  using Kind = BatchKind;
  Kind kind = Kind::kChanges;
  int64_t version = 0; // Unset (0) for kExisting.
  std::vector<BasicChange<K>> changes;
  std::shared_ptr<EncodingMemo> memo; // Null: encoded for one stream only.
};

// The same changes, in the same order (what makes two streams' batches one).
template <typename K>
bool SameChanges(const BasicBatch<K> &a, const BasicBatch<K> &b) {
  if (a.version != b.version || a.changes.size() != b.changes.size())
    return false;
  for (size_t i = 0; i < a.changes.size(); ++i) {
    const BasicChange<K> &x = a.changes[i];
    const BasicChange<K> &y = b.changes[i];
    if (x.happened != y.happened || x.what != y.what ||
        x.left_filter != y.left_filter) {
      return false;
    }
  }
  return true;
}

// What `entry` brings `filter`'s stream: a kChanges batch, or nullopt when
// nothing in it matches.
template <typename K>
std::optional<BasicBatch<K>> BatchFor(const typename K::Filter &filter,
                                      const BasicEntry<K> &entry) {
  BasicBatch<K> batch{BatchKind::kChanges, entry.version, {}, nullptr};
  for (const auto &happened : entry.happened) {
    if (auto change = Classify(filter, happened))
      batch.changes.push_back(std::move(*change));
  }
  if (batch.changes.empty())
    return std::nullopt;
  return batch;
}

} // namespace wsched::watch

#endif // WSCHED_SERVER_WATCH_BATCH_H_
