// One transaction and the repositories bound to it. Code outside
// server/store reads and writes PostgreSQL only through a UnitOfWork: it
// never sees a connection, a transaction or a statement.
//
// A write records what it changed (entity, id, version) in the unit; when
// the body returns OK the unit appends those changes to the change log as
// one entry, with its NOTIFY, as the transaction's last statement and
// commits (change_log.h). A body that returns an error rolls everything
// back, its changes included. So a read-check-write (a class update
// against expected_version, a settings change, a catalog apply, a node
// registration) is one body: the guards and the write commit together.
#ifndef WSCHED_SERVER_STORE_UNIT_OF_WORK_H_
#define WSCHED_SERVER_STORE_UNIT_OF_WORK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/budget_enforcement.h"
#include "server/core/catalog.h"
#include "server/core/node.h"
#include "server/core/settings.h"
#include "server/core/workspace.h"
#include "server/store/audit_query.h"
#include "server/store/database.h"
#include "server/store/types.h"
#include "server/store/usage_query.h"

namespace wsched::store {

// What a repository of a unit works on: the unit's transaction and the
// changes it will publish (defined in unit_of_work.cc).
struct UnitSession;

// Classes, pools and the driver policy (catalog_repository.h).
class CatalogRepository {
 public:
  explicit CatalogRepository(UnitSession& session) : s_(session) {}
  // Serializes catalog writers across replicas until the unit ends.
  void Lock();
  absl::StatusOr<core::Catalog> Load();
  int64_t Generation();
  // Ids of classes that pending, placed or lost workspaces use.
  std::set<std::string> ClassesInUse();
  // Both bump the generation and record the catalog change.
  absl::Status Write(const core::Catalog& current, const core::Catalog& target);
  absl::StatusOr<core::WorkspaceClass> WriteClass(core::WorkspaceClass cls, int64_t expected_version);

 private:
  UnitSession& s_;
};

// Project and org class settings (settings_repository.h). `version`, when
// given, gets the row's version (0: none stored).
class SettingsRepository {
 public:
  explicit SettingsRepository(UnitSession& session) : s_(session) {}
  absl::StatusOr<core::ProjectSettings> LoadProject(const std::string& project_id,
                                                    int64_t* version = nullptr);
  absl::StatusOr<core::OrgSettings> LoadOrg(const std::string& org_id, int64_t* version = nullptr);
  // Both record the settings change. `expected_version` 0 writes
  // unconditionally; otherwise ABORTED (VERSION_MISMATCH) when the stored
  // version differs, checked by the writing statement itself. `version`,
  // when given, gets the new version.
  absl::Status SaveProject(const core::ProjectSettings& settings, int64_t expected_version = 0,
                           int64_t* version = nullptr);
  absl::Status SaveOrg(const core::OrgSettings& settings, int64_t expected_version = 0,
                       int64_t* version = nullptr);
  // The org's projects with a spending limit of their own.
  absl::StatusOr<std::vector<std::pair<std::string, core::SpendingLimit>>> LoadProjectLimitsOfOrg(
      const std::string& org_id);
  // The group commit's per-org lock, to the end of the unit: a change of
  // the org's or a project's limit and the admissions judged against them
  // take turns.
  void LockOrgLimits(const std::string& org_id);

 private:
  UnitSession& s_;
};

// Nodes, their liveness and what losing or removing them does to the
// workspaces on them (node_repository.h). Writes record their changes.
class NodeRepository {
 public:
  explicit NodeRepository(UnitSession& session) : s_(session) {}
  // `for_update` locks the row until the unit ends.
  absl::StatusOr<std::optional<StoredNode>> Load(const std::string& name, bool for_update);
  absl::StatusOr<std::vector<StoredNode>> LoadAll(const std::string& pool = "");
  absl::StatusOr<std::vector<StoredNode>> LoadPage(const std::string& pool, const std::string& after_name,
                                                   int limit);
  absl::StatusOr<std::vector<StoredNode>> LoadByName(const std::vector<std::string>& names);
  // Every node of `pool` named `name` ("" = any), by name (WatchNodes).
  absl::StatusOr<std::vector<StoredNode>> ListSelected(const std::string &pool,
                                                       const std::string &name);
  int64_t Save(const StoredNode& node);
  int64_t SetState(const std::string& name, core::NodeState state);
  // Liveness only: nothing published.
  int64_t RecordHeartbeats(const std::vector<std::string>& names);
  std::vector<std::string> MarkLost(absl::Duration timeout);
  std::vector<std::string> ReleaseLostWorkspaces(const std::string& node);
  std::vector<std::string> Delete(const std::string& name);
  // Another node that claims this provider id or one of these GPU UUIDs
  // (node_repository.h).
  std::optional<IdentityClaim> FindIdentityClaim(const std::string& name,
                                                 const std::string& provider_id,
                                                 const std::vector<std::string>& gpu_uuids);
  // Workspaces on each node (all nodes, or `nodes` alone), CPU and GPU
  // alike: placed, or lost and not yet released. Nodes without any are
  // absent.
  std::map<std::string, int> WorkspaceCounts(const std::vector<std::string>& nodes = {});
  // Driver rollouts under way (core/driver_rollout.h), by pool.
  // `pool` "" for all; `for_update` locks the pool's row until the unit ends.
  std::vector<DriverRolloutRow> LoadRollouts(const std::string& pool = "", bool for_update = false);
  void SaveRollout(const std::string& pool, const core::RolloutRecord& record);
  bool DeleteRollout(const std::string& pool);

 private:
  UnitSession& s_;
};

// Workspace reads, the retention sweep and the idle mark
// (workspace_repository.h); the other writes go through the group commit
// (commit_batcher.h).
class WorkspaceRepository {
 public:
  explicit WorkspaceRepository(UnitSession& session) : s_(session) {}
  absl::StatusOr<std::optional<WorkspaceRow>> Load(const std::string& id);
  absl::StatusOr<std::vector<WorkspaceRow>> LoadMany(const std::vector<std::string>& ids);
  absl::StatusOr<std::vector<WorkspaceRow>> LoadActive();
  absl::StatusOr<std::vector<core::Workspace>> List(const WorkspaceFilter& filter, const std::string& after_id,
                                                    int limit);
  int64_t DeleteEnded(absl::Duration retention, int limit);
  absl::StatusOr<std::vector<WorkspaceRow>> ListSelected(const WorkspaceSelection& selection);
  int64_t OrgGpuSeventhsHeld(const std::string& org_id);
  // The idle-GPU policy's mark (store::SetIdleMark): the new version, or
  // nullopt when the record is not at `version` or not placed.
  std::optional<int64_t> SetIdleMark(const std::string& id, int64_t version,
                                     const std::optional<core::IdleMark>& mark);
  // The first ready report of a placement (store::SetReadyAt): the new
  // version, or nullopt when the record is not at `version`, not placed,
  // or ready already.
  std::optional<int64_t> SetReadyAt(const std::string& id, int64_t version, absl::Time ready_at);

 private:
  UnitSession& s_;
};

// Measured node start, driver install and first ready times
// (timing_repository.h).
class TimingRepository {
 public:
  explicit TimingRepository(UnitSession& session) : s_(session) {}
  void Record(TimingKind kind, const std::string& pool, const std::string& kernel, absl::Duration took,
              core::DriverCache cache = core::DriverCache::kUnknown);
  TimingFigures LoadFigures();
  void RecordGivenEstimate(const std::string& id, absl::Time at, absl::Duration p50,
                           absl::Duration p90);
  std::vector<CheckedEstimate> CheckEstimates(const std::vector<std::string>& ids,
                                              absl::Time placed_at);
  std::map<std::string, EstimateAccuracy> LoadEstimateAccuracy(absl::Time since,
                                                               absl::Duration grace);

 private:
  UnitSession& s_;
};

// Published scaling signals, MIG re-layouts and actuator reports
// (scaling_repository.h).
class ScalingRepository {
 public:
  explicit ScalingRepository(UnitSession& session) : s_(session) {}
  void SaveSignal(const SignalRow& signal);
  absl::StatusOr<std::vector<SignalRow>> LoadSignals();
  // The MIG re-layouts under way, which the leader publishes as a whole.
  // Returns the orders stored: those whose GPU holds nothing.
  std::vector<RelayoutRow> ReplaceRelayouts(const std::vector<RelayoutRow>& rows);
  absl::StatusOr<std::vector<RelayoutRow>> LoadRelayouts();
  void SaveActuatorReport(const ActuatorReportRow& report);
  std::vector<ActuatorReportRow> LoadActuatorReports(int64_t after);
  int64_t LatestActuatorReportId();

 private:
  UnitSession& s_;
};

// Who changed what (audit_repository.h): appended after every
// state-changing admin or project-owner call and listed by admins, both
// through app/audit_operations.h.
class AuditRepository {
 public:
  explicit AuditRepository(UnitSession& session) : s_(session) {}
  void Append(const core::AuditRecord& record);
  // Newest first, ids below `before_id` (0: from the newest).
  std::vector<core::AuditRecord> List(const AuditFilter& filter, int64_t before_id, int limit);
  // At most `limit` of the oldest records older than `retention`.
  int64_t DeleteOlderThan(absl::Duration retention, int limit);

 private:
  UnitSession& s_;
};

// The usage ledger (usage_repository.h): read by app/usage_operations.h, swept by
// --usage_retention. Its records are written by the transactions that end
// placements, not through here.
class UsageRepository {
 public:
  explicit UsageRepository(UnitSession& session) : s_(session) {}
  // By started_at then workspace_id, after `after`; open placements counted to now.
  absl::StatusOr<std::vector<core::UsageRecord>> List(const UsageFilter& filter,
                                                const std::optional<UsageCursor>& after, int limit);
  absl::StatusOr<std::vector<core::UsageSummaryRow>> Summarize(const UsageSummaryRequest& request);
  // Whether PostgreSQL knows the IANA time zone `name`.
  bool KnownTimeZone(const std::string& name);
  // At most `limit` of the records that ended longest ago, if more than `retention` ago.
  int64_t DeleteOlderThan(absl::Duration retention, int limit);
  // An org's ("org") or project's ("project") spending since `period_start`.
  SpendingReading ReadSpending(const std::string& kind, const std::string& id,
                               absl::Time period_start);
  // The same, as a placement is admitted against a limit (batch_budgets.h).
  int64_t AdmissionSpent(const std::string& kind, const std::string& id, absl::Time period_start,
                         absl::Duration committed_interval);
  // The transaction's now(): the clock the ledger counts by.
  absl::Time DatabaseNow();

 private:
  UnitSession& s_;
};

// What spending limits write on running workspaces and the thresholds
// told (budget_repository.h): the scaling leader's budget pass.
class BudgetRepository {
 public:
  explicit BudgetRepository(UnitSession& session) : s_(session) {}
  absl::StatusOr<std::vector<LimitedScope>> LoadLimitedScopes();
  // Placed GPU workspaces of an org ("org") or project ("project").
  absl::StatusOr<std::vector<core::BudgetedWorkspace>> RunningOf(const std::string& kind,
                                                                 const std::string& id);
  absl::StatusOr<std::vector<core::BudgetedWorkspace>> Warned();
  // Only at exactly `version`: the new version, or nullopt when it moved on.
  std::optional<int64_t> SetMark(const std::string& id, int64_t version,
                                 const std::optional<core::BudgetMark>& mark);
  std::vector<int> Told(const std::string& scope);
  std::vector<int> Claim(const std::string& scope, const std::vector<int>& percents,
                         absl::Time period_end);

 private:
  UnitSession& s_;
};

// Each node's own credential, as the SHA-256 of its token
// (node_credential_repository.h). Writes record their changes.
class NodeCredentialRepository {
 public:
  explicit NodeCredentialRepository(UnitSession& session) : s_(session) {}
  // nullopt (nothing written) when the node has one or the token is another node's.
  std::optional<NodeCredentialRow> Issue(const std::string& node, const std::string& token_sha256,
                                         const std::string& issued_by);
  // The node must exist; nullopt when the token is another node's.
  std::optional<NodeCredentialRow> Replace(const std::string& node, const std::string& token_sha256,
                                           const std::string& issued_by);
  bool Revoke(const std::string& node);
  // Those of `nodes` that have one; all when `nodes` is empty.
  std::vector<NodeCredentialRow> Load(const std::vector<std::string>& nodes);

 private:
  UnitSession& s_;
};

// The change log itself (change_log.h), for followers and pruning.
class ChangeLogRepository {
 public:
  explicit ChangeLogRepository(UnitSession& session) : s_(session) {}
  FeedRead ReadSince(int64_t after, int limit);
  // What the entries after `after` did to workspaces (WatchWorkspaces).
  absl::StatusOr<WorkspaceHistoryRead> ReadWorkspaceHistory(int64_t after, int limit);
  // What they did to nodes (WatchNodes).
  absl::StatusOr<NodeHistoryRead> ReadNodeHistory(int64_t after, int limit);
  int64_t Head();
  int64_t Prune(absl::Duration keep_for);

 private:
  UnitSession& s_;
};

class UnitOfWork {
 public:
  enum class Mode {
    kReadWrite,
    // One REPEATABLE READ, read-only snapshot: every read sees the same
    // committed state (the change-log head agrees with the rows).
    kSnapshot,
  };
  // How long the unit may wait on PostgreSQL (docs/operations.md, "Bounded
  // waits"): db.bounds().call, or .sweep for the few units that may rightly
  // take long (a retention sweep's batch, a full load of the cluster state).
  enum class Bound { kCall, kLong };
  using Body = std::function<absl::Status(UnitOfWork&)>;

  // Runs `body` in one transaction on `db`; see the file comment. Database
  // errors become a Status (pg_status.h): UNAVAILABLE when unreachable or
  // past its bound, ABORTED for a lost race or a violated constraint.
  static absl::Status Run(Database& db, absl::string_view what, const Body& body,
                          Mode mode = Mode::kReadWrite, Bound bound = Bound::kCall);

  CatalogRepository& catalog() { return catalog_; }
  SettingsRepository& settings() { return settings_; }
  NodeRepository& nodes() { return nodes_; }
  WorkspaceRepository& workspaces() { return workspaces_; }
  TimingRepository& timings() { return timings_; }
  ScalingRepository& scaling() { return scaling_; }
  ChangeLogRepository& change_log() { return change_log_; }
  UsageRepository& usage() { return usage_; }
  AuditRepository& audit() { return audit_; }
  BudgetRepository& budget() { return budget_; }
  NodeCredentialRepository& node_credentials() { return node_credentials_; }

  UnitOfWork(const UnitOfWork&) = delete;
  UnitOfWork& operator=(const UnitOfWork&) = delete;

 private:
  explicit UnitOfWork(UnitSession& session);

  CatalogRepository catalog_;
  SettingsRepository settings_;
  NodeRepository nodes_;
  WorkspaceRepository workspaces_;
  TimingRepository timings_;
  ScalingRepository scaling_;
  ChangeLogRepository change_log_;
  UsageRepository usage_;
  AuditRepository audit_;
  BudgetRepository budget_;
  NodeCredentialRepository node_credentials_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_UNIT_OF_WORK_H_
