// Where a watch stream reads what the fanout did not hand it: the listing
// at a version, and the change log's entries after a version, for one kind
// of record (batch.h). Both from PostgreSQL in database_history.h; fakes
// in tests.
#ifndef WSCHED_SERVER_WATCH_HISTORY_SOURCE_H_
#define WSCHED_SERVER_WATCH_HISTORY_SOURCE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/watch/batch.h"
#include "server/watch/change.h"
#include "server/watch/filter.h"
#include "server/watch/node_change.h"

namespace wsched::watch {

// Every record a filter selects, as of one version (each as a change that
// brought it to how it is then).
template <typename K> struct BasicListing {
  int64_t version = 0;
  std::vector<std::shared_ptr<const typename K::Happened>> records;
};

template <typename K> struct BasicHistoryRead {
  int64_t head = 0;  // The newest version committed.
  // False when the log no longer holds the entry right after `after`;
  // `oldest` is then the oldest version a stream can resume from.
  bool reaches = true;
  int64_t oldest = 0;
  std::vector<BasicEntry<K>> entries; // After `after`, ascending, contiguous.
};

template <typename K> class BasicHistorySource {
public:
  virtual ~BasicHistorySource() = default;
  // Workspaces: with no states in `filter`, the live ones (pending, placed,
  // lost); before = after's facts. Nodes: every node the filter selects.
  virtual absl::StatusOr<BasicListing<K>>
  List(const typename K::Filter &filter) = 0;
  virtual absl::StatusOr<BasicHistoryRead<K>> ReadSince(int64_t after,
                                                        int limit) = 0;
  virtual absl::StatusOr<int64_t> Head() = 0;
};

using Listing = BasicListing<WorkspaceKind>;
using HistoryRead = BasicHistoryRead<WorkspaceKind>;
using HistorySource = BasicHistorySource<WorkspaceKind>;
using NodeListing = BasicListing<NodeKind>;
using NodeHistoryRead = BasicHistoryRead<NodeKind>;
using NodeHistorySource = BasicHistorySource<NodeKind>;

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_HISTORY_SOURCE_H_
