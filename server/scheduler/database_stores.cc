#include "server/scheduler/database_stores.h"

#include "absl/strings/str_cat.h"
#include "server/store/catalog_repository.h"
#include "server/store/change_log.h"
#include "server/store/settings_repository.h"

namespace wsched::scheduler {

absl::StatusOr<PlacementInputs> DatabasePlacementStore::ReadInputs(const PlaceRequest& request) {
  PlacementInputs in;
  absl::Status read = db_->InTransaction("reading placement inputs", [&](pqxx::work& txn) -> absl::Status {
    auto stored = store::LoadWorkspace(txn, request.workspace_id);
    if (!stored.ok()) return stored.status();
    in.existing = std::move(*stored);
    if (in.existing && core::IsActive(in.existing->workspace)) return absl::OkStatus();
    in.catalog_generation = store::CatalogGeneration(txn);
    auto p = store::LoadProjectSettings(txn, request.project_id, &in.project_version);
    if (!p.ok()) return p.status();
    in.project = std::move(*p);
    auto o = store::LoadOrgSettings(txn, request.org_id, &in.org_version);
    if (!o.ok()) return o.status();
    in.org = std::move(*o);
    if (in.org.gpu_quota >= 0) in.org_gpus = store::OrgGpusHeld(txn, request.org_id);
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return in;
}

absl::StatusOr<std::optional<store::WorkspaceRow>> DatabasePlacementStore::LoadWorkspace(
    const std::string& id) {
  std::optional<store::WorkspaceRow> row;
  absl::Status status = db_->InTransaction("reading workspace", [&](pqxx::work& txn) -> absl::Status {
    auto loaded = store::LoadWorkspace(txn, id);
    if (!loaded.ok()) return loaded.status();
    row = std::move(*loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return row;
}

absl::StatusOr<StateStore::Rows> DatabaseStateStore::Load(bool catalog,
                                                          const std::vector<std::string>& nodes,
                                                          const std::vector<std::string>& workspaces) {
  Rows rows;
  absl::Status read = db_->InTransaction("applying the change feed", [&](pqxx::work& txn) -> absl::Status {
    if (catalog) {
      auto loaded = store::LoadCatalog(txn);
      if (!loaded.ok()) return loaded.status();
      rows.catalog = std::move(*loaded);
      rows.catalog_generation = store::CatalogGeneration(txn);
    }
    if (!nodes.empty()) {
      auto loaded = store::LoadNodesByName(txn, nodes);
      if (!loaded.ok()) return loaded.status();
      rows.nodes = std::move(*loaded);
    }
    if (!workspaces.empty()) {
      auto loaded = store::LoadWorkspaces(txn, workspaces);
      if (!loaded.ok()) return loaded.status();
      rows.workspaces = std::move(*loaded);
    }
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return rows;
}

absl::StatusOr<StateStore::Everything> DatabaseStateStore::LoadAll() {
  Everything all;
  absl::Status status = db_->InTransaction("loading cluster state", [&](pqxx::work& txn) -> absl::Status {
    // One snapshot of the database: the log position and the rows agree.
    txn.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    all.position = store::FeedHead(txn);
    all.catalog_generation = store::CatalogGeneration(txn);
    auto catalog = store::LoadCatalog(txn);
    if (!catalog.ok()) return catalog.status();
    all.catalog = std::move(*catalog);
    auto nodes = store::LoadNodes(txn);
    if (!nodes.ok()) return nodes.status();
    all.nodes = std::move(*nodes);
    auto active = store::LoadActiveWorkspaces(txn);
    if (!active.ok()) return active.status();
    all.active = std::move(*active);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return all;
}

absl::StatusOr<store::FeedRead> DatabaseFeedSource::ReadSince(int64_t after, int limit) {
  store::FeedRead read;
  absl::Status status = db_->InTransaction("reading the change log", [&](pqxx::work& txn) {
    read = store::ReadChangesSince(txn, after, limit);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return read;
}

}  // namespace wsched::scheduler
