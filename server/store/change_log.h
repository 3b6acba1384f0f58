// The change log: what each committed transaction changed (entity, id,
// version), in commit order and without gaps, so replicas apply deltas
// instead of re-reading the fleet (DESIGN.md "Replica synchronisation").
#ifndef WSCHED_SERVER_STORE_CHANGE_LOG_H_
#define WSCHED_SERVER_STORE_CHANGE_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/store/statement_pipeline.h"

namespace wsched::store {

enum class Entity { kCatalog, kNode, kWorkspace, kSettings };
const char* EntityName(Entity entity);
std::optional<Entity> ParseEntity(absl::string_view name);

struct Change {
  Entity entity = Entity::kWorkspace;
  std::string id;       // Node name, workspace id, settings key; "" for the catalog.
  int64_t version = 0;  // The entity's version after the change.
  friend bool operator==(const Change&, const Change&) = default;
};

// The changes one transaction makes, published together when it commits.
class ChangeSet {
 public:
  void Add(Entity entity, std::string id, int64_t version) {
    changes_.push_back({entity, std::move(id), version});
  }
  void Append(const ChangeSet& other) {
    changes_.insert(changes_.end(), other.changes_.begin(), other.changes_.end());
  }
  bool empty() const { return changes_.empty(); }
  const std::vector<Change>& changes() const { return changes_; }

 private:
  std::vector<Change> changes_;
};

// Appends `changes` to the log as the next entry and NOTIFYs listeners; a
// no-op for an empty set. Run it as the LAST statement before COMMIT: it
// locks the log head until the transaction ends. Returns the entry's seq.
int64_t PublishChanges(pqxx::work& txn, const ChangeSet& changes);
// The same, queued on a pipeline (nothing for an empty set); the caller
// prepares it once per connection with PreparePublish.
void PreparePublish(pqxx::connection_base& connection);
std::optional<StatementPipeline::Id> QueuePublish(StatementPipeline& pipeline, const ChangeSet& changes);

struct ChangeRecord {
  int64_t seq = 0;
  std::string replica;  // Who committed it (store::ReplicaId()).
  absl::Time written_at;
  std::vector<Change> changes;
};

struct FeedRead {
  int64_t head = 0;                   // The newest committed seq.
  std::vector<ChangeRecord> records;  // seq > after, ascending, at most `limit`.
};

// Entries after `after`, and the head as of the same statement.
FeedRead ReadChangesSince(pqxx::work& txn, int64_t after, int limit);
int64_t FeedHead(pqxx::work& txn);
// Deletes entries older than `keep_for`; returns how many.
int64_t PruneChangeLog(pqxx::work& txn, absl::Duration keep_for);

// A fresh version for an entity (nodes and workspaces share one sequence).
int64_t NextVersion(pqxx::work& txn);

// A PostgreSQL text[] literal of `values`, quoted and escaped.
std::string TextArray(const std::vector<std::string>& values);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CHANGE_LOG_H_
