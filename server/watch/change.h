// What WatchWorkspaces streams: one committed change of one workspace
// (Happened), what a given filter makes of it (Change: what happened, and
// whether it left the filter), and the messages a stream sends (Batch):
// the workspace kind of batch.h. Pure: the same entry gives the same
// messages on every replica.
#ifndef WSCHED_SERVER_WATCH_CHANGE_H_
#define WSCHED_SERVER_WATCH_CHANGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "server/core/workspace.h"
#include "server/watch/batch.h"
#include "server/watch/filter.h"

namespace wsched::watch {

// One workspace's change as its transaction committed it.
struct Happened {
  std::string id;
  int64_t version = 0;  // The workspace's version after it.
  Facts before;
  std::optional<core::Workspace> after;  // nullopt: deleted (retention).
};

enum class What { kExisting, kPending, kPlaced, kStopped, kLost, kIdleChanged, kDeleted };
const char* WhatName(What what);

// The kind WatchWorkspaces follows (batch.h).
struct WorkspaceKind {
  using Happened = watch::Happened;
  using What = watch::What;
  using Filter = watch::Filter;
  static constexpr char kName[] = "workspace";
};

using Entry = BasicEntry<WorkspaceKind>;
using Change = BasicChange<WorkspaceKind>;
using Batch = BasicBatch<WorkspaceKind>;

// What `filter`'s stream says of `happened`: nothing when the workspace
// matched neither before nor after it.
std::optional<Change> Classify(const Filter &filter,
                               const std::shared_ptr<const Happened> &happened);

// The key a filter is filed under in the fanout's index: its most
// selective field (node, project, pool, class, org), else "*".
std::string IndexKeyOf(const Filter &filter);
// The keys under which the streams `happened` may matter to are filed:
// those of the workspace before and after it ("*" aside).
void KeysOf(const Happened &happened, absl::flat_hash_set<std::string> &keys);

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_CHANGE_H_
