#include "server/replica/database_stores.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "server/store/unit_of_work.h"

namespace wsched::replica {
namespace {

// `limit` of `scope` `id` with what its period has spent; nullopt when its
// period cannot be found (a time zone unknown here).
std::optional<core::BudgetStanding> StandingOf(store::UnitOfWork& unit, const std::string& scope,
                                               const std::string& id,
                                               const core::SpendingLimit& limit, absl::Time now,
                                               absl::Duration interval) {
  absl::StatusOr<core::PeriodBounds> period = core::PeriodAt(limit.period, now);
  if (!period.ok()) return std::nullopt;
  core::BudgetStanding standing;
  standing.scope = scope;
  standing.id = id;
  standing.limit = core::GpuMicrosOf(limit);
  standing.spent = unit.usage().AdmissionSpent(scope, id, period->start, interval);
  standing.committed_interval = interval;
  standing.period_end = period->end;
  return standing;
}

}  // namespace

absl::StatusOr<PlacementInputs> DatabasePlacementStore::ReadInputs(const PlaceRequest& request) {
  PlacementInputs in;
  absl::Status read = store::UnitOfWork::Run(*db_, "reading placement inputs",
                                             [&](store::UnitOfWork& unit) -> absl::Status {
    auto stored = unit.workspaces().Load(request.workspace_id);
    if (!stored.ok()) return stored.status();
    in.existing = std::move(*stored);
    if (in.existing && core::IsActive(in.existing->workspace)) return absl::OkStatus();
    in.catalog_generation = unit.catalog().Generation();
    auto p = unit.settings().LoadProject(request.project_id, &in.project_version);
    if (!p.ok()) return p.status();
    in.project = std::move(*p);
    auto o = unit.settings().LoadOrg(request.org_id, &in.org_version);
    if (!o.ok()) return o.status();
    in.org = std::move(*o);
    if (in.org.gpu_quota >= 0)
      in.org_gpu_sevenths = unit.workspaces().OrgGpuSeventhsHeld(request.org_id);
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return in;
}

absl::StatusOr<StoredSettings> DatabasePlacementStore::ReadSettings(const std::string& project_id,
                                                                   const std::string& org_id,
                                                                   bool count_org_gpus) {
  StoredSettings read;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading settings",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto project = unit.settings().LoadProject(project_id, &read.project_version);
    if (!project.ok()) return project.status();
    read.project = std::move(*project);
    auto org = unit.settings().LoadOrg(org_id, &read.org_version);
    if (!org.ok()) return org.status();
    read.org = std::move(*org);
    if (count_org_gpus && read.org.gpu_quota >= 0) {
      read.org_gpu_sevenths_held = unit.workspaces().OrgGpuSeventhsHeld(org_id);
    }
    if (!count_org_gpus || (!read.org.spending_limit && !read.project.spending_limit)) {
      return absl::OkStatus();
    }
    // By the ledger's clock, as the commit admits.
    const absl::Time now = unit.usage().DatabaseNow();
    for (const auto& [scope, id, limit] :
         {std::tuple("org", &org_id, &read.org.spending_limit),
          std::tuple("project", &project_id, &read.project.spending_limit)}) {
      if (!*limit) continue;
      if (auto standing = StandingOf(unit, scope, *id, **limit, now, budget_interval_)) {
        read.budgets.push_back(*std::move(standing));
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return read;
}

absl::StatusOr<std::optional<store::WorkspaceRow>> DatabasePlacementStore::LoadWorkspace(
    const std::string& id) {
  std::optional<store::WorkspaceRow> row;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading workspace",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto loaded = unit.workspaces().Load(id);
    if (!loaded.ok()) return loaded.status();
    row = std::move(*loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return row;
}

absl::Status DatabasePlacementStore::RecordGivenEstimate(const std::string& id, absl::Time at,
                                                         absl::Duration p50, absl::Duration p90) {
  return store::UnitOfWork::Run(*db_, "recording a given estimate",
                                [&](store::UnitOfWork& unit) -> absl::Status {
    unit.timings().RecordGivenEstimate(id, at, p50, p90);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::optional<store::WorkspaceRow>> DatabasePlacementStore::RecordReady(
    const store::WorkspaceRow& seen, absl::Time ready_at) {
  std::optional<store::WorkspaceRow> written;
  absl::Status status = store::UnitOfWork::Run(*db_, "recording a first ready",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    written.reset();  // A retried body starts over.
    const core::Workspace& w = seen.workspace;
    std::optional<int64_t> version = unit.workspaces().SetReadyAt(w.id, seen.version, ready_at);
    if (!version) return absl::OkStatus();
    unit.timings().Record(store::TimingKind::kFirstReady, w.pool, "", ready_at - w.placed_at);
    written = seen;
    written->workspace.ready_at = ready_at;
    written->version = *version;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return written;
}

absl::StatusOr<std::vector<store::CheckedEstimate>> DatabasePlacementStore::CheckEstimates(
    const std::vector<std::string>& ids, absl::Time placed_at) {
  std::vector<store::CheckedEstimate> checked;
  absl::Status status = store::UnitOfWork::Run(*db_, "checking estimates",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    checked = unit.timings().CheckEstimates(ids, placed_at);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return checked;
}

absl::StatusOr<std::map<std::string, store::EstimateAccuracy>>
DatabasePlacementStore::LoadEstimateAccuracy(absl::Time since, absl::Duration grace) {
  std::map<std::string, store::EstimateAccuracy> by_pool;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading estimate accuracy",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    by_pool = unit.timings().LoadEstimateAccuracy(since, grace);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return by_pool;
}

absl::StatusOr<std::vector<core::Workspace>> DatabasePlacementStore::ListWorkspaces(
    const store::WorkspaceFilter& filter, const std::string& after, int limit) {
  std::vector<core::Workspace> stored;
  absl::Status status = store::UnitOfWork::Run(*db_, "listing workspaces",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto loaded = unit.workspaces().List(filter, after, limit);
    if (!loaded.ok()) return loaded.status();
    stored = std::move(*loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return stored;
}

absl::StatusOr<StateStore::Rows> DatabaseStateStore::Load(bool catalog,
                                                          const std::vector<std::string>& nodes,
                                                          const std::vector<std::string>& workspaces) {
  Rows rows;
  absl::Status read = store::UnitOfWork::Run(*db_, "applying the change feed",
                                             [&](store::UnitOfWork& unit) -> absl::Status {
    if (catalog) {
      auto loaded = unit.catalog().Load();
      if (!loaded.ok()) return loaded.status();
      rows.catalog = std::move(*loaded);
      rows.catalog_generation = unit.catalog().Generation();
    }
    if (!nodes.empty()) {
      auto loaded = unit.nodes().LoadByName(nodes);
      if (!loaded.ok()) return loaded.status();
      rows.nodes = std::move(*loaded);
    }
    if (!workspaces.empty()) {
      auto loaded = unit.workspaces().LoadMany(workspaces);
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
  // One snapshot of the database: the log position and the rows agree.
  absl::Status status = store::UnitOfWork::Run(
      *db_, "loading cluster state",
      [&](store::UnitOfWork& unit) -> absl::Status {
    all.position = unit.change_log().Head();
    all.catalog_generation = unit.catalog().Generation();
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    all.catalog = std::move(*catalog);
    auto nodes = unit.nodes().LoadAll();
    if (!nodes.ok()) return nodes.status();
    all.nodes = std::move(*nodes);
    auto active = unit.workspaces().LoadActive();
    if (!active.ok()) return active.status();
    all.active = std::move(*active);
    return absl::OkStatus();
  },
      // Every node and live workspace: seconds at 100,000 workspaces.
      store::UnitOfWork::Mode::kSnapshot, store::UnitOfWork::Bound::kLong);
  if (!status.ok()) return status;
  return all;
}

absl::StatusOr<store::FeedRead> DatabaseFeedSource::ReadSince(int64_t after, int limit) {
  store::FeedRead read;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading the change log",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    read = unit.change_log().ReadSince(after, limit);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return read;
}

}  // namespace wsched::replica
