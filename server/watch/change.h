// What WatchWorkspaces streams: one committed change of one workspace
// (Happened), what a given filter makes of it (Change: what happened, and
// whether it left the filter), and the messages a stream sends (Batch).
// Pure: the same entry gives the same messages on every replica.
#ifndef WSCHED_SERVER_WATCH_CHANGE_H_
#define WSCHED_SERVER_WATCH_CHANGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/core/workspace.h"
#include "server/watch/filter.h"

namespace wsched::watch {

// One workspace's change as its transaction committed it.
struct Happened {
  std::string id;
  int64_t version = 0;  // The workspace's version after it.
  Facts before;
  std::optional<core::Workspace> after;  // nullopt: deleted (retention).
};

// One change-log entry (a version): what it did to workspaces, often
// nothing (it changed nodes or settings only).
struct Entry {
  int64_t version = 0;
  std::vector<std::shared_ptr<const Happened>> happened;
};

enum class What { kExisting, kPending, kPlaced, kStopped, kLost, kIdleChanged, kDeleted };
const char* WhatName(What what);

// A Happened as one filter's stream tells it.
struct Change {
  What what = What::kExisting;
  bool left_filter = false;  // It matched before the change and does not after.
  std::shared_ptr<const Happened> happened;
};

// What `filter`'s stream says of `happened`: nothing when the workspace
// matched neither before nor after it.
std::optional<Change> Classify(const Filter &filter,
                               const std::shared_ptr<const Happened> &happened);

// Where the transport keeps what it made of a batch (its wire bytes), so
// that the streams handed the same batch share one encoding. Copies of a
// batch share their memo; the fanout hands streams whose changes are the
// same copies of one batch.
struct EncodingMemo {
  absl::Mutex mu;
  std::shared_ptr<const void> encoded ABSL_GUARDED_BY(mu);
};

// One message of a stream.
struct Batch {
  enum class Kind { kExisting, kSynced, kChanges, kBookmark };
  Kind kind = Kind::kChanges;
  int64_t version = 0;  // Unset (0) for kExisting.
  std::vector<Change> changes;
  std::shared_ptr<EncodingMemo> memo;  // Null: encoded for one stream only.
};

// The same changes, in the same order (what makes two streams' batches one).
bool SameChanges(const Batch& a, const Batch& b);

// What `entry` brings `filter`'s stream: a kChanges batch, or nullopt when
// nothing in it matches.
std::optional<Batch> BatchFor(const Filter& filter, const Entry& entry);

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_CHANGE_H_
