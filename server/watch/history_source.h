// Where WatchWorkspaces reads what the fanout did not hand it: the listing
// at a version, and the change log's entries after a version (both from
// PostgreSQL in database_history.h; fakes in tests).
#ifndef WSCHED_SERVER_WATCH_HISTORY_SOURCE_H_
#define WSCHED_SERVER_WATCH_HISTORY_SOURCE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/watch/change.h"
#include "server/watch/filter.h"

namespace wsched::watch {

// Every workspace a filter selects, as of one version.
struct Listing {
  int64_t version = 0;
  std::vector<std::shared_ptr<const Happened>> workspaces;  // before = after's facts.
};

struct HistoryRead {
  int64_t head = 0;  // The newest version committed.
  // False when the log no longer holds the entry right after `after`;
  // `oldest` is then the oldest version a stream can resume from.
  bool reaches = true;
  int64_t oldest = 0;
  std::vector<Entry> entries;  // After `after`, ascending, contiguous.
};

class HistorySource {
 public:
  virtual ~HistorySource() = default;
  // With no states in `filter`, the live workspaces (pending, placed, lost).
  virtual absl::StatusOr<Listing> List(const Filter& filter) = 0;
  virtual absl::StatusOr<HistoryRead> ReadSince(int64_t after, int limit) = 0;
  virtual absl::StatusOr<int64_t> Head() = 0;
};

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_HISTORY_SOURCE_H_
