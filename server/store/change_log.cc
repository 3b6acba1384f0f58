#include "server/store/change_log.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/store/change_feed.h"
#include "server/store/prepared.h"

namespace wsched::store {
namespace {

// The elements of a one-dimensional array column (libpqxx 6 parser).
std::vector<std::string> ArrayElements(const pqxx::field& field) {
  std::vector<std::string> out;
  pqxx::array_parser parser = field.as_array();
  for (auto [juncture, value] = parser.get_next(); juncture != pqxx::array_parser::juncture::done;
       std::tie(juncture, value) = parser.get_next()) {
    if (juncture == pqxx::array_parser::juncture::string_value) out.push_back(std::move(value));
    if (juncture == pqxx::array_parser::juncture::null_value) out.emplace_back();
  }
  return out;
}

}  // namespace

const char* EntityName(Entity entity) {
  switch (entity) {
    case Entity::kCatalog: return "catalog";
    case Entity::kNode: return "node";
    case Entity::kWorkspace: return "workspace";
    case Entity::kSettings: return "settings";
    case Entity::kNodeCredential: return "node_credential";
  }
  return "unknown";
}

std::optional<Entity> ParseEntity(absl::string_view name) {
  for (Entity e : {Entity::kCatalog, Entity::kNode, Entity::kWorkspace, Entity::kSettings,
                   Entity::kNodeCredential}) {
    if (name == EntityName(e)) return e;
  }
  return std::nullopt;
}

std::string TextArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

namespace {

// Incrementing the head locks it until COMMIT: entries get their seq in
// commit order, and a rollback returns the number (no gaps). The NOTIFY is
// delivered at COMMIT.
constexpr Statement kPublish{
    "publish_changes",
    "WITH head AS (UPDATE feed_head SET seq = seq + 1 RETURNING seq), "
    "entry AS (INSERT INTO change_log (seq, replica, entities, ids, versions) "
    "SELECT seq, $1, $2::text[], $3::text[], $4::bigint[] FROM head RETURNING seq) "
    "SELECT seq, pg_notify($5, $1 || ':' || seq) FROM entry"};

struct PublishArgs {
  std::string entities, ids, versions;
};

PublishArgs ArgsOf(const ChangeSet& changes) {
  std::vector<std::string> entities, ids, versions;
  for (const Change& change : changes.changes()) {
    entities.push_back(EntityName(change.entity));
    ids.push_back(change.id);
    versions.push_back(absl::StrCat(change.version));
  }
  return {TextArray(entities), TextArray(ids), TextArray(versions)};
}

}  // namespace

int64_t PublishChanges(pqxx::work& txn, const ChangeSet& changes) {
  if (changes.empty()) return 0;
  PublishArgs args = ArgsOf(changes);
  return ExecPrepared(txn, kPublish.name, kPublish.sql, ReplicaId(), args.entities, args.ids,
                      args.versions, std::string(kChangeChannel))[0][0]
      .as<int64_t>();
}

void PreparePublish(pqxx::connection_base& connection) { StatementPipeline::Prepare(connection, kPublish); }

std::optional<StatementPipeline::Id> QueuePublish(StatementPipeline& pipeline, const ChangeSet& changes) {
  if (changes.empty()) return std::nullopt;
  PublishArgs args = ArgsOf(changes);
  return pipeline.Execute(kPublish, ReplicaId(), args.entities, args.ids, args.versions,
                          std::string(kChangeChannel));
}

FeedRead ReadChangesSince(pqxx::work& txn, int64_t after, int limit) {
  FeedRead read;
  pqxx::result rows = txn.exec_params(
      "SELECT h.seq, c.seq, c.replica, date_part('epoch', c.written_at), c.entities, "
      "c.ids, c.versions FROM feed_head h LEFT JOIN LATERAL (SELECT * FROM change_log "
      "WHERE seq > $1 ORDER BY seq LIMIT $2) c ON true ORDER BY c.seq",
      after, limit);
  for (const auto& row : rows) {
    read.head = row[0].as<int64_t>();
    if (row[1].is_null()) continue;
    ChangeRecord record;
    record.seq = row[1].as<int64_t>();
    record.replica = row[2].c_str();
    record.written_at = absl::FromUnixMicros(static_cast<int64_t>(row[3].as<double>() * 1e6));
    std::vector<std::string> entities = ArrayElements(row[4]);
    std::vector<std::string> ids = ArrayElements(row[5]);
    std::vector<std::string> versions = ArrayElements(row[6]);
    for (size_t i = 0; i < entities.size() && i < ids.size() && i < versions.size(); ++i) {
      std::optional<Entity> entity = ParseEntity(entities[i]);
      int64_t version = 0;
      // An entity this binary does not know (a newer replica's) is skipped.
      if (!entity || !absl::SimpleAtoi(versions[i], &version)) continue;
      record.changes.push_back({*entity, ids[i], version});
    }
    read.records.push_back(std::move(record));
  }
  return read;
}

int64_t FeedHead(pqxx::work& txn) {
  return txn.exec1("SELECT seq FROM feed_head")[0].as<int64_t>();
}

int64_t PruneChangeLog(pqxx::work& txn, absl::Duration keep_for) {
  return txn
      .exec_params("DELETE FROM change_log WHERE written_at < now() - make_interval(secs => $1)",
                   absl::ToDoubleSeconds(keep_for))
      .affected_rows();
}

int64_t NextVersion(pqxx::work& txn) {
  return txn.exec1("SELECT nextval('entity_versions')")[0].as<int64_t>();
}

}  // namespace wsched::store
