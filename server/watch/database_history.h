// The history sources over PostgreSQL: each listing is one REPEATABLE READ
// snapshot (the log's head and the rows agree), the history the change
// log's stored rows (workspaces: migrations/0016; nodes: 0018).
#ifndef WSCHED_SERVER_WATCH_DATABASE_HISTORY_H_
#define WSCHED_SERVER_WATCH_DATABASE_HISTORY_H_

#include "server/store/database.h"
#include "server/watch/history_source.h"

namespace wsched::watch {

class DatabaseHistory final : public HistorySource {
 public:
  explicit DatabaseHistory(store::Database* db) : db_(db) {}
  absl::StatusOr<Listing> List(const Filter& filter) override;
  absl::StatusOr<HistoryRead> ReadSince(int64_t after, int limit) override;
  absl::StatusOr<int64_t> Head() override;

 private:
  store::Database* const db_;
};

class DatabaseNodeHistory final : public NodeHistorySource {
public:
  explicit DatabaseNodeHistory(store::Database *db) : db_(db) {}
  absl::StatusOr<NodeListing> List(const NodeFilter &filter) override;
  absl::StatusOr<NodeHistoryRead> ReadSince(int64_t after, int limit) override;
  absl::StatusOr<int64_t> Head() override;

private:
  store::Database *const db_;
};

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_DATABASE_HISTORY_H_
