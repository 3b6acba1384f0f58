#include "server/store/workspace_repository.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/store/budget_repository.h"
#include "server/store/documents/documents.h"

namespace wsched::store {

// Read by every replica for every workspace another one writes, so each
// column is cheap to compute: date_part returns the epoch as float8 (the
// same value extract gives through numeric, at less cost), and only a GPU
// or slice workspace looks for its holds (a slice's placement document has
// its "slice": documents/hand_off_document.cc).
#define WSCHED_COLUMNS_BEFORE_GPUS                                                          \
  "w.id, w.org_id, w.project_id, w.user_id, w.class_id, w.class_source, w.explanation, "   \
  "w.state, w.priority, COALESCE(w.node_name, ''), COALESCE(w.pool, ''), w.cpu_millis, "   \
  "w.memory_bytes, COALESCE(w.placement::text, ''), w.pending_reason, "                    \
  "date_part('epoch', w.created_at), COALESCE(date_part('epoch', w.placed_at), 0), "
#define WSCHED_COLUMNS_AFTER_GPUS                             \
  ", w.version, "                                             \
  "w.stopped_at IS NOT NULL, w.placement_schema, "            \
  "(extract(epoch from w.idle_since) * 1000000)::bigint, "    \
  "(extract(epoch from w.idle_stops_at) * 1000000)::bigint, " \
  "COALESCE(w.budget_mark::text, ''), "                       \
  "(extract(epoch from w.ready_at) * 1000000)::bigint"

const char kWorkspaceColumns[] = WSCHED_COLUMNS_BEFORE_GPUS
    "CASE WHEN w.gpu_count > 0 OR w.placement ? 'slice' THEN COALESCE(" WSCHED_HOLDS_TEXT
    ", '') ELSE '' END" WSCHED_COLUMNS_AFTER_GPUS;

std::string WorkspaceColumnsOverStoredRow(absl::string_view gpus_sql) {
  return absl::StrCat(WSCHED_COLUMNS_BEFORE_GPUS, gpus_sql, WSCHED_COLUMNS_AFTER_GPUS);
}

#undef WSCHED_COLUMNS_BEFORE_GPUS
#undef WSCHED_COLUMNS_AFTER_GPUS

namespace {

constexpr const char* kColumns = kWorkspaceColumns;

absl::Time FromEpoch(const pqxx::field& field) {
  return absl::FromUnixMicros(static_cast<int64_t>(field.as<double>() * 1e6));
}

// WSCHED_HOLDS_TEXT's form back into the workspace's GPUs or slice.
absl::Status ReadHolds(absl::string_view text, core::Workspace& w) {
  for (absl::string_view hold : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> parts = absl::StrSplit(hold, absl::MaxSplits('/', 1));
    std::vector<std::string> numbers = absl::StrSplit(parts.first, ':');
    int index = 0, instance = 0, compute_slices = 0;
    const bool whole = numbers.size() == 1 && absl::SimpleAtoi(numbers[0], &index);
    const bool slice = numbers.size() == 3 && absl::SimpleAtoi(numbers[0], &index) &&
                       absl::SimpleAtoi(numbers[1], &instance) &&
                       absl::SimpleAtoi(numbers[2], &compute_slices);
    if (whole) {
      w.gpu_indices.push_back(index);
      w.gpu_uuids.push_back(parts.second);
    } else if (slice && !w.slice) {
      w.slice = core::WorkspaceSlice{{index, instance}, parts.second, compute_slices};
    } else {
      return absl::DataLossError(
          absl::StrCat("workspace ", w.id, " has a GPU hold that does not read: ", hold));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkspaceRow> FromRow(const pqxx::row& row) {
  WorkspaceRow out;
  core::Workspace& w = out.workspace;
  w.id = row[0].c_str();
  w.org_id = row[1].c_str();
  w.project_id = row[2].c_str();
  w.user_id = row[3].c_str();
  w.class_id = row[4].c_str();
  w.class_source = row[5].c_str();
  w.explanation = row[6].c_str();
  auto state = core::ParseWorkspaceState(row[7].c_str());
  if (!state) return absl::DataLossError(absl::StrCat("workspace ", w.id, " has an unknown state"));
  w.state = *state;
  w.priority = row[8].as<int>();
  w.node_name = row[9].c_str();
  w.pool = row[10].c_str();
  w.cpu_millis = row[11].as<int64_t>();
  w.memory_bytes = row[12].as<int64_t>();
  if (row[13].size() > 0) {  // "" for a workspace never placed.
    auto hand_off = documents::DecodeHandOff(row[13].c_str(), {"workspaces", w.id, row[20].as<int>()});
    if (!hand_off.ok()) return hand_off.status();
    w.hand_off = std::make_shared<const core::HandOff>(std::move(*hand_off));
  }
  w.pending_reason = row[14].c_str();
  w.created_at = FromEpoch(row[15]);
  if (row[16].as<double>() > 0) w.placed_at = FromEpoch(row[16]);
  if (absl::Status holds = ReadHolds(row[17].c_str(), w); !holds.ok()) return holds;
  out.version = row[18].as<int64_t>();
  out.released = row[19].as<bool>();
  // In microseconds, exactly as written: the replica that wrote the mark
  // compares it with its own.
  if (!row[21].is_null()) {
    w.idle = core::IdleMark{absl::FromUnixMicros(row[21].as<int64_t>()), std::nullopt};
    if (!row[22].is_null()) w.idle->stops_at = absl::FromUnixMicros(row[22].as<int64_t>());
  }
  if (row[23].size() > 0) {
    auto mark = ParseBudgetMarkJson(row[23].c_str());
    if (!mark.ok()) return mark.status();
    w.budget = *std::move(mark);
  }
  if (!row[24].is_null()) w.ready_at = absl::FromUnixMicros(row[24].as<int64_t>());
  return out;
}

}  // namespace

WorkspaceFacts FactsOf(const core::Workspace& w) {
  return {core::WorkspaceStateName(w.state),
          w.org_id,
          w.project_id,
          w.pool,
          w.node_name,
          w.class_id};
}

absl::StatusOr<WorkspaceRow> WorkspaceRowOf(const pqxx::row& row) { return FromRow(row); }

absl::StatusOr<std::vector<WorkspaceRow>> WorkspaceRows(const pqxx::result& rows) {
  std::vector<WorkspaceRow> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    auto w = FromRow(row);
    if (!w.ok()) return w.status();
    out.push_back(std::move(*w));
  }
  return out;
}


absl::StatusOr<std::optional<WorkspaceRow>> LoadWorkspace(pqxx::work& txn,
                                                         const std::string& id) {
  pqxx::result rows =
      txn.exec_params(absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.id = $1"), id);
  if (rows.empty()) return std::optional<WorkspaceRow>();
  auto w = FromRow(rows[0]);
  if (!w.ok()) return w.status();
  return std::optional<WorkspaceRow>(std::move(*w));
}

absl::StatusOr<std::vector<WorkspaceRow>> LoadWorkspaces(pqxx::work& txn,
                                                        const std::vector<std::string>& ids) {
  return WorkspaceRows(txn.exec_params(
      absl::StrCat("SELECT ", kColumns, " FROM workspaces w WHERE w.id = ANY($1::text[])"),
      TextArray(ids)));
}

absl::StatusOr<std::vector<WorkspaceRow>> LoadActiveWorkspaces(pqxx::work& txn) {
  return WorkspaceRows(txn.exec(absl::StrCat(
      "SELECT ", kColumns, " FROM workspaces w WHERE w.state IN ('pending', 'placed', 'lost') "
      "AND w.stopped_at IS NULL ORDER BY w.created_at, w.id")));
}

absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(pqxx::work& txn,
                                                            const WorkspaceFilter& filter,
                                                            const std::string& after_id, int limit) {
  auto rows = WorkspaceRows(txn.exec_params(
      absl::StrCat("SELECT ", kColumns,
                   " FROM workspaces w WHERE ($1 = '' OR w.node_name = $1) AND "
                   "($2 = '' OR w.pool = $2) AND ($3 = '' OR w.state = $3) AND w.id > $4 "
                   "ORDER BY w.id LIMIT $5"),
      filter.node, filter.pool, filter.state, after_id, limit));
  if (!rows.ok()) return rows.status();
  std::vector<core::Workspace> out;
  out.reserve(rows->size());
  for (auto& row : *rows) out.push_back(std::move(row.workspace));
  return out;
}

int64_t DeleteEndedWorkspaces(pqxx::work& txn, absl::Duration retention, int limit,
                              ChangeSet& changes) {
  // The ORDER BY and the bound follow the partial index workspaces_ended
  // (migrations/0006): a batch reads only the rows it deletes. A deletion
  // gets a fresh version, as a removed node does.
  pqxx::result deleted = txn.exec_params(
      "WITH old AS (SELECT id FROM workspaces WHERE stopped_at IS NOT NULL "
      "AND stopped_at < now() - make_interval(secs => $1::float8) "
      "AND state IN ('stopped', 'lost') ORDER BY stopped_at LIMIT $2 "
      "FOR UPDATE SKIP LOCKED) "
      "DELETE FROM workspaces w USING old WHERE w.id = old.id RETURNING w.id, "
      "nextval('entity_versions'), w.state, w.org_id, w.project_id, COALESCE(w.pool, ''), "
      "COALESCE(w.node_name, ''), w.class_id",
      absl::ToDoubleSeconds(retention), limit);
  for (const auto& row : deleted) {
    changes.AddWorkspace(row[0].c_str(), row[1].as<int64_t>(),
                         {row[2].c_str(), row[3].c_str(), row[4].c_str(), row[5].c_str(),
                          row[6].c_str(), row[7].c_str()});
  }
  return static_cast<int64_t>(deleted.size());
}

absl::StatusOr<std::vector<WorkspaceRow>>
ListSelectedWorkspaces(pqxx::work &txn, const WorkspaceSelection &selection) {
  static const std::vector<std::string> *live =
      new std::vector<std::string>{"pending", "placed", "lost"};
  const std::vector<std::string>& states = selection.states.empty() ? *live : selection.states;
  return WorkspaceRows(txn.exec_params(
      absl::StrCat(
          "SELECT ", kColumns,
          " FROM workspaces w WHERE w.state = ANY($1::text[]) AND "
          "($2 = '' OR w.org_id = $2) AND ($3 = '' OR w.project_id = $3) AND "
          "($4 = '' OR w.class_id = $4) AND ($5 = '' OR w.pool = $5) AND "
          "($6 = '' OR w.node_name = $6) AND "
          "(NOT $7 OR w.org_id = ANY($8::text[]) OR w.project_id = "
          "ANY($9::text[])) "
          "ORDER BY w.id"),
      TextArray(states), selection.org_id, selection.project_id,
      selection.class_id, selection.pool, selection.node,
      selection.scope_orgs.has_value() || selection.scope_projects.has_value(),
      TextArray(selection.scope_orgs.value_or(std::vector<std::string>{})),
      TextArray(
          selection.scope_projects.value_or(std::vector<std::string>{}))));
}

std::optional<int64_t> SetIdleMark(pqxx::work& txn, const std::string& id, int64_t version,
                                   const std::optional<core::IdleMark>& mark, ChangeSet& changes) {
  const bool marked = mark.has_value();
  const bool stops = marked && mark->stops_at.has_value();
  pqxx::result rows = txn.exec_params(
      "UPDATE workspaces SET "
      "idle_since = CASE WHEN $3 THEN 'epoch'::timestamptz + $4 * interval '1 microsecond' END, "
      "idle_stops_at = CASE WHEN $5 THEN 'epoch'::timestamptz + $6 * interval '1 microsecond' END, "
      "version = nextval('entity_versions') "
      "WHERE id = $1 AND version = $2 AND state = 'placed'" +
          std::string(kPlacedMarkReturning),
      id, version, marked, marked ? absl::ToUnixMicros(mark->since) : int64_t{0}, stops,
      stops ? absl::ToUnixMicros(*mark->stops_at) : int64_t{0});
  return PublishPlacedMark(rows, id, changes);
}

std::optional<int64_t> SetReadyAt(pqxx::work& txn, const std::string& id, int64_t version,
                                  absl::Time ready_at, ChangeSet& changes) {
  pqxx::result rows = txn.exec_params(
      "UPDATE workspaces SET "
      "ready_at = 'epoch'::timestamptz + $3 * interval '1 microsecond', "
      "version = nextval('entity_versions') "
      "WHERE id = $1 AND version = $2 AND state = 'placed' AND ready_at IS NULL" +
          std::string(kPlacedMarkReturning),
      id, version, absl::ToUnixMicros(ready_at));
  return PublishPlacedMark(rows, id, changes);
}

std::optional<int64_t> PublishPlacedMark(const pqxx::result& rows, const std::string& id,
                                         ChangeSet& changes) {
  if (rows.empty()) return std::nullopt;
  const int64_t after = rows[0][0].as<int64_t>();
  changes.AddWorkspace(id, after,
                       {"placed", rows[0][1].c_str(), rows[0][2].c_str(), rows[0][3].c_str(),
                        rows[0][4].c_str(), rows[0][5].c_str()});
  return after;
}

int64_t OrgGpuSeventhsHeld(pqxx::work& txn, const std::string& org_id) {
  return txn
      .exec_params(
          "SELECT COALESCE(sum(h.compute_slices), 0) FROM gpu_holds h "
          "JOIN workspaces w ON w.id = h.workspace_id WHERE w.org_id = $1",
          org_id)[0][0]
      .as<int64_t>();
}

}  // namespace wsched::store
