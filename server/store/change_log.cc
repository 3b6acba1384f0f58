#include "server/store/change_log.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/store/change_feed.h"
#include "server/store/node_repository.h"
#include "server/store/prepared.h"
#include "server/store/workspace_repository.h"

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
// delivered at COMMIT. As the transaction's last statement it also reads
// the rows of the workspaces and nodes it changed, exactly as they commit,
// and keeps them with the entry for WatchWorkspaces and WatchNodes
// (migrations/0016, 0018).
constexpr Statement kPublish{
    "publish_changes",
    "WITH head AS (UPDATE feed_head SET seq = seq + 1 RETURNING seq), "
    "changed AS (SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[], "
    "$6::text[], "
    "$7::text[], $8::text[], $9::text[], $10::text[], $11::text[], "
    "$12::bool[]) WITH "
    "ORDINALITY "
    "AS c(entity, id, version, state, org, project, pool, node, class, "
    "created, ord)), "
    "payload AS (SELECT jsonb_agg(jsonb_build_object('id', c.id, 'version', "
    "c.version, "
    "'before', jsonb_build_array(c.state, c.org, c.project, c.pool, c.node, "
    "c.class), "
    "'row', (SELECT to_jsonb(w) || jsonb_build_object('gpus', " WSCHED_HOLDS_TEXT
    ") "
    "FROM workspaces w WHERE w.id = c.id)) ORDER BY c.ord) AS doc FROM changed "
    "c WHERE c.entity = 'workspace'), "
    // A node's pool (also of a removed one), and its row less what is
    // generated from it, with its last heartbeat (kept apart, in
    // node_liveness) as of this commit.
    "node_payload AS (SELECT jsonb_agg(jsonb_build_object('id', c.id, "
    "'pool', c.pool, 'version', c.version, 'registered', c.created, "
    "'row', (SELECT (to_jsonb(n) - 'gpu_uuids') || "
    "jsonb_build_object('last_heartbeat', "
    "(SELECT extract(epoch FROM l.last_heartbeat)::float8 FROM node_liveness l "
    "WHERE l.name = n.name)) FROM nodes n WHERE n.name = c.id)) ORDER BY "
    "c.ord) AS doc "
    "FROM changed c WHERE c.entity = 'node'), "
    "entry AS (INSERT INTO change_log (seq, replica, entities, ids, versions, "
    "workspaces, nodes) "
    "SELECT head.seq, $1, $2::text[], $3::text[], $4::bigint[], payload.doc, "
    "node_payload.doc FROM head, payload, node_payload "
    "RETURNING seq) "
    "SELECT seq, pg_notify($5, $1 || ':' || seq) FROM entry"};

struct PublishArgs {
  std::string entities, ids, versions;
  // Each workspace's facts before the change.
  std::string states, orgs, projects, pools, nodes, classes;
  std::string created; // Nodes: whether the change registered it.
};

PublishArgs ArgsOf(const ChangeSet& changes) {
  std::vector<std::string> entities, ids, versions, states, orgs, projects,
      pools, nodes, classes, created;
  for (const Change& change : changes.changes()) {
    entities.push_back(EntityName(change.entity));
    ids.push_back(change.id);
    versions.push_back(absl::StrCat(change.version));
    states.push_back(change.before.state);
    orgs.push_back(change.before.org_id);
    projects.push_back(change.before.project_id);
    pools.push_back(change.before.pool);
    nodes.push_back(change.before.node);
    classes.push_back(change.before.class_id);
    created.push_back(change.created ? "t" : "f");
  }
  return {TextArray(entities), TextArray(ids),   TextArray(versions),
          TextArray(states),   TextArray(orgs),  TextArray(projects),
          TextArray(pools),    TextArray(nodes), TextArray(classes),
          TextArray(created)};
}

}  // namespace

int64_t PublishChanges(pqxx::work& txn, const ChangeSet& changes) {
  if (changes.empty()) return 0;
  PublishArgs args = ArgsOf(changes);
  return ExecPrepared(txn, kPublish.name, kPublish.sql, ReplicaId(),
                      args.entities, args.ids, args.versions,
                      std::string(kChangeChannel), args.states, args.orgs,
                      args.projects, args.pools, args.nodes, args.classes,
                      args.created)[0][0]
      .as<int64_t>();
}

void PreparePublish(pqxx::connection_base& connection) { StatementPipeline::Prepare(connection, kPublish); }

std::optional<StatementPipeline::Id> QueuePublish(StatementPipeline& pipeline, const ChangeSet& changes) {
  if (changes.empty()) return std::nullopt;
  PublishArgs args = ArgsOf(changes);
  return pipeline.Execute(kPublish, ReplicaId(), args.entities, args.ids,
                          args.versions, std::string(kChangeChannel),
                          args.states, args.orgs, args.projects, args.pools,
                          args.nodes, args.classes, args.created);
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

namespace {

// One row per workspace change (or one per entry that changed none): the
// stored row's columns first (WorkspaceRowOf), then where it belongs.
const std::string &WorkspaceHistorySql() {
  static const std::string* sql = new std::string(absl::StrCat(
      "SELECT ", WorkspaceColumnsOverStoredRow("COALESCE(e.value->'row'->>'gpus', '')"),
      ", c.seq, e.value->>'id', (e.value->>'version')::bigint, e.value->'before'->>0, "
      "e.value->'before'->>1, e.value->'before'->>2, e.value->'before'->>3, "
      "e.value->'before'->>4, e.value->'before'->>5, "
      "jsonb_typeof(e.value->'row') = 'object' "
      "FROM (SELECT seq, workspaces FROM change_log WHERE seq > $1 ORDER BY seq LIMIT $2) c "
      "LEFT JOIN LATERAL jsonb_array_elements(c.workspaces) WITH ORDINALITY e(value, ord) ON true "
      "LEFT JOIN LATERAL jsonb_populate_record(NULL::workspaces, "
      "CASE WHEN jsonb_typeof(e.value->'row') = 'object' THEN e.value->'row' END) w ON true "
      "ORDER BY c.seq, e.ord"));
  return *sql;
}

constexpr int kWorkspaceHistoryColumn = 25; // The first column after the row's.

// The same for nodes (NodeRowOf), from change_log.nodes (migrations/0018).
const std::string &NodeHistorySql() {
  static const std::string *sql = new std::string(absl::StrCat(
      "SELECT ",
      NodeColumnsOverStoredRow(
          "COALESCE((e.value->'row'->>'last_heartbeat')::float8, 0)"),
      ", c.seq, e.value->>'id', (e.value->>'version')::bigint, "
      "jsonb_typeof(e.value->'row') = 'object', COALESCE(e.value->>'pool', "
      "''), "
      "COALESCE((e.value->>'registered')::bool, false) "
      "FROM (SELECT seq, nodes FROM change_log WHERE seq > $1 ORDER BY seq "
      "LIMIT $2) c "
      "LEFT JOIN LATERAL jsonb_array_elements(c.nodes) WITH ORDINALITY "
      "e(value, ord) ON true "
      "LEFT JOIN LATERAL jsonb_populate_record(NULL::nodes, "
      "CASE WHEN jsonb_typeof(e.value->'row') = 'object' THEN e.value->'row' "
      "END) n ON true "
      "ORDER BY c.seq, e.ord"));
  return *sql;
}

constexpr int kNodeHistoryColumn = 17; // The first column after the row's.

// The entries after `after` (at most `limit`) as `sql` has them: a row per
// change, or one per entry that changed no record of the kind, the entry's
// seq at `k` and the change's id (NULL for none) at `k + 1`. `parse` makes
// a change of a row.
template <typename ChangeRow, typename Parse>
absl::StatusOr<HistoryRead<ChangeRow>>
ReadHistory(pqxx::work &txn, const std::string &sql, int k, int64_t after,
            int limit, Parse parse) {
  HistoryRead<ChangeRow> read;
  pqxx::row bounds = txn.exec1(
      "SELECT h.seq, COALESCE((SELECT min(seq) FROM change_log), h.seq + 1) "
      "FROM feed_head h");
  read.head = bounds[0].as<int64_t>();
  read.oldest = bounds[1].as<int64_t>() - 1;  // Resuming from it misses nothing.
  for (const auto &row : txn.exec_params(sql, after, limit)) {
    const int64_t seq = row[k].as<int64_t>();
    if (read.entries.empty() || read.entries.back().seq != seq) read.entries.push_back({seq, {}});
    if (row[k + 1].is_null())
      continue; // The entry changed no record of this kind.
    absl::StatusOr<ChangeRow> change = parse(row);
    if (!change.ok())
      return change.status();
    read.entries.back().changes.push_back(std::move(*change));
  }
  // The entries read must start right after `after`: a later first one
  // means the log was pruned past it. The head is read first, so entries
  // committed since may follow it; none may be missing before it.
  const int64_t first = read.entries.empty() ? read.head + 1 : read.entries.front().seq;
  read.reaches = after >= read.head ? true : first == after + 1;
  if (read.entries.empty() && after < read.head) read.reaches = false;
  return read;
}

} // namespace

absl::StatusOr<WorkspaceHistoryRead>
ReadWorkspaceHistory(pqxx::work &txn, int64_t after, int limit) {
  const int k = kWorkspaceHistoryColumn;
  return ReadHistory<WorkspaceChangeRow>(
      txn, WorkspaceHistorySql(), k, after, limit,
      [k](const pqxx::row &row) -> absl::StatusOr<WorkspaceChangeRow> {
        WorkspaceChangeRow change;
        change.id = row[k + 1].c_str();
        change.version = row[k + 2].as<int64_t>();
        change.before = {row[k + 3].c_str(), row[k + 4].c_str(),
                         row[k + 5].c_str(), row[k + 6].c_str(),
                         row[k + 7].c_str(), row[k + 8].c_str()};
        if (row[k + 9].as<bool>()) {
          auto after_row = WorkspaceRowOf(row);
          if (!after_row.ok())
            return after_row.status();
          change.after = std::move(*after_row);
        }
        return change;
      });
}

absl::StatusOr<NodeHistoryRead> ReadNodeHistory(pqxx::work &txn, int64_t after,
                                                int limit) {
  const int k = kNodeHistoryColumn;
  return ReadHistory<NodeChangeRow>(
      txn, NodeHistorySql(), k, after, limit,
      [k](const pqxx::row &row) -> absl::StatusOr<NodeChangeRow> {
        NodeChangeRow change;
        change.id = row[k + 1].c_str();
        change.version = row[k + 2].as<int64_t>();
        change.pool = row[k + 4].c_str();
        change.registered = row[k + 5].as<bool>();
        if (row[k + 3].as<bool>()) {
          auto node = NodeRowOf(row);
          if (!node.ok())
            return node.status();
          change.after = std::move(*node);
        }
        return change;
      });
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
