#include "server/store/unit_of_work.h"

#include "server/store/audit_repository.h"
#include "server/store/batch_budgets.h"
#include "server/store/budget_repository.h"
#include "server/store/usage_repository.h"
#include "server/store/node_credential_repository.h"
#include "server/store/catalog_repository.h"
#include "server/store/change_log.h"
#include "server/store/connection.h"
#include "server/store/node_repository.h"
#include "server/store/scaling_repository.h"
#include "server/store/settings_repository.h"
#include "server/store/timing_repository.h"
#include "server/store/workspace_repository.h"

namespace wsched::store {

struct UnitSession {
  pqxx::work& txn;
  ChangeSet changes;
};

// ---- catalog

void CatalogRepository::Lock() { LockCatalog(s_.txn); }
absl::StatusOr<core::Catalog> CatalogRepository::Load() { return LoadCatalog(s_.txn); }
int64_t CatalogRepository::Generation() { return CatalogGeneration(s_.txn); }
std::set<std::string> CatalogRepository::ClassesInUse() { return store::ClassesInUse(s_.txn); }

absl::Status CatalogRepository::Write(const core::Catalog& current, const core::Catalog& target) {
  return WriteCatalog(s_.txn, current, target, s_.changes);
}

absl::StatusOr<core::WorkspaceClass> CatalogRepository::WriteClass(core::WorkspaceClass cls,
                                                                   int64_t expected_version) {
  return store::WriteClass(s_.txn, std::move(cls), expected_version, s_.changes);
}

// ---- settings

absl::StatusOr<core::ProjectSettings> SettingsRepository::LoadProject(const std::string& project_id,
                                                                      int64_t* version) {
  return LoadProjectSettings(s_.txn, project_id, version);
}

absl::StatusOr<core::OrgSettings> SettingsRepository::LoadOrg(const std::string& org_id, int64_t* version) {
  return LoadOrgSettings(s_.txn, org_id, version);
}

absl::Status SettingsRepository::SaveProject(const core::ProjectSettings& settings,
                                             int64_t expected_version, int64_t* version) {
  return SaveProjectSettings(s_.txn, settings, expected_version, s_.changes, version);
}

absl::Status SettingsRepository::SaveOrg(const core::OrgSettings& settings,
                                         int64_t expected_version, int64_t* version) {
  return SaveOrgSettings(s_.txn, settings, expected_version, s_.changes, version);
}

absl::StatusOr<std::vector<std::pair<std::string, core::SpendingLimit>>>
SettingsRepository::LoadProjectLimitsOfOrg(const std::string& org_id) {
  return store::LoadProjectLimitsOfOrg(s_.txn, org_id);
}

void SettingsRepository::LockOrgLimits(const std::string& org_id) {
  store::LockOrgLimits(s_.txn, org_id);
}

// ---- nodes

absl::StatusOr<std::optional<StoredNode>> NodeRepository::Load(const std::string& name, bool for_update) {
  return LoadNode(s_.txn, name, for_update);
}

absl::StatusOr<std::vector<StoredNode>> NodeRepository::LoadAll(const std::string& pool) {
  return LoadNodes(s_.txn, pool);
}

absl::StatusOr<std::vector<StoredNode>> NodeRepository::LoadPage(const std::string& pool,
                                                                 const std::string& after_name, int limit) {
  return LoadNodesPage(s_.txn, pool, after_name, limit);
}

absl::StatusOr<std::vector<StoredNode>> NodeRepository::LoadByName(const std::vector<std::string>& names) {
  return LoadNodesByName(s_.txn, names);
}

absl::StatusOr<std::vector<StoredNode>>
NodeRepository::ListSelected(const std::string &pool, const std::string &name) {
  return ListSelectedNodes(s_.txn, pool, name);
}

int64_t NodeRepository::Save(const StoredNode& node) { return SaveNode(s_.txn, node, s_.changes); }

int64_t NodeRepository::SetState(const std::string& name, core::NodeState state) {
  return SetNodeState(s_.txn, name, state, s_.changes);
}

int64_t NodeRepository::RecordHeartbeats(const std::vector<std::string>& names) {
  return store::RecordHeartbeats(s_.txn, names);
}

std::vector<std::string> NodeRepository::MarkLost(absl::Duration timeout) {
  return MarkLostNodes(s_.txn, timeout, s_.changes);
}

std::vector<std::string> NodeRepository::ReleaseLostWorkspaces(const std::string& node) {
  return store::ReleaseLostWorkspaces(s_.txn, node, s_.changes);
}

std::vector<std::string> NodeRepository::Delete(const std::string& name) {
  return DeleteNode(s_.txn, name, s_.changes);
}

std::optional<IdentityClaim> NodeRepository::FindIdentityClaim(
    const std::string& name, const std::string& provider_id,
    const std::vector<std::string>& gpu_uuids) {
  return store::FindIdentityClaim(s_.txn, name, provider_id, gpu_uuids);
}

std::map<std::string, int> NodeRepository::WorkspaceCounts(const std::vector<std::string>& nodes) {
  return WorkspaceCountsOnNodes(s_.txn, nodes);
}

std::vector<DriverRolloutRow> NodeRepository::LoadRollouts(const std::string& pool, bool for_update) {
  return LoadDriverRollouts(s_.txn, pool, for_update);
}

void NodeRepository::SaveRollout(const std::string& pool, const core::RolloutRecord& record) {
  SaveDriverRollout(s_.txn, pool, record);
}

bool NodeRepository::DeleteRollout(const std::string& pool) {
  return DeleteDriverRollout(s_.txn, pool);
}

// ---- workspaces

absl::StatusOr<std::optional<WorkspaceRow>> WorkspaceRepository::Load(const std::string& id) {
  return LoadWorkspace(s_.txn, id);
}

absl::StatusOr<std::vector<WorkspaceRow>> WorkspaceRepository::LoadMany(const std::vector<std::string>& ids) {
  return LoadWorkspaces(s_.txn, ids);
}

absl::StatusOr<std::vector<WorkspaceRow>> WorkspaceRepository::LoadActive() {
  return LoadActiveWorkspaces(s_.txn);
}

absl::StatusOr<std::vector<core::Workspace>> WorkspaceRepository::List(const WorkspaceFilter& filter,
                                                                       const std::string& after_id, int limit) {
  return ListWorkspaces(s_.txn, filter, after_id, limit);
}

int64_t WorkspaceRepository::DeleteEnded(absl::Duration retention, int limit) {
  return DeleteEndedWorkspaces(s_.txn, retention, limit, s_.changes);
}

absl::StatusOr<std::vector<WorkspaceRow>> WorkspaceRepository::ListSelected(
    const WorkspaceSelection& selection) {
  return ListSelectedWorkspaces(s_.txn, selection);
}

int64_t WorkspaceRepository::OrgGpuSeventhsHeld(const std::string& org_id) {
  return store::OrgGpuSeventhsHeld(s_.txn, org_id);
}

std::optional<int64_t> WorkspaceRepository::SetIdleMark(const std::string& id, int64_t version,
                                                        const std::optional<core::IdleMark>& mark) {
  return store::SetIdleMark(s_.txn, id, version, mark, s_.changes);
}

std::optional<int64_t> WorkspaceRepository::SetReadyAt(const std::string& id, int64_t version,
                                                       absl::Time ready_at) {
  return store::SetReadyAt(s_.txn, id, version, ready_at, s_.changes);
}

// ---- budget

absl::StatusOr<std::vector<LimitedScope>> BudgetRepository::LoadLimitedScopes() {
  return store::LoadLimitedScopes(s_.txn);
}

absl::StatusOr<std::vector<core::BudgetedWorkspace>> BudgetRepository::RunningOf(
    const std::string& kind, const std::string& id) {
  return RunningOfScope(s_.txn, kind, id);
}

absl::StatusOr<std::vector<core::BudgetedWorkspace>> BudgetRepository::Warned() {
  return WarnedWorkspaces(s_.txn);
}

std::optional<int64_t> BudgetRepository::SetMark(const std::string& id, int64_t version,
                                                 const std::optional<core::BudgetMark>& mark) {
  return SetBudgetMark(s_.txn, id, version, mark, s_.changes);
}

std::vector<int> BudgetRepository::Told(const std::string& scope) {
  return ToldThresholds(s_.txn, scope);
}

std::vector<int> BudgetRepository::Claim(const std::string& scope, const std::vector<int>& percents,
                                         absl::Time period_end) {
  return ClaimThresholds(s_.txn, scope, percents, period_end);
}

// ---- timings, scaling, change log

void TimingRepository::Record(TimingKind kind, const std::string& pool, const std::string& kernel,
                              absl::Duration took, core::DriverCache cache) {
  RecordTimingSample(s_.txn, kind, pool, kernel, took, cache);
}

TimingFigures TimingRepository::LoadFigures() { return LoadTimingFigures(s_.txn); }

void TimingRepository::RecordGivenEstimate(const std::string& id, absl::Time at,
                                           absl::Duration p50, absl::Duration p90) {
  store::RecordGivenEstimate(s_.txn, id, at, p50, p90);
}

std::vector<CheckedEstimate> TimingRepository::CheckEstimates(const std::vector<std::string>& ids,
                                                              absl::Time placed_at) {
  return store::CheckEstimates(s_.txn, ids, placed_at);
}

std::map<std::string, EstimateAccuracy> TimingRepository::LoadEstimateAccuracy(
    absl::Time since, absl::Duration grace) {
  return store::LoadEstimateAccuracy(s_.txn, since, grace);
}

void ScalingRepository::SaveSignal(const SignalRow& signal) { store::SaveSignal(s_.txn, signal); }
absl::StatusOr<std::vector<SignalRow>> ScalingRepository::LoadSignals() {
  return store::LoadSignals(s_.txn);
}

std::vector<RelayoutRow> ScalingRepository::ReplaceRelayouts(const std::vector<RelayoutRow>& rows) {
  return store::ReplaceRelayouts(s_.txn, rows);
}
absl::StatusOr<std::vector<RelayoutRow>> ScalingRepository::LoadRelayouts() {
  return store::LoadRelayouts(s_.txn);
}
void ScalingRepository::SaveActuatorReport(const ActuatorReportRow& report) {
  store::SaveActuatorReport(s_.txn, report);
}

std::vector<ActuatorReportRow> ScalingRepository::LoadActuatorReports(int64_t after) {
  return store::LoadActuatorReports(s_.txn, after);
}

int64_t ScalingRepository::LatestActuatorReportId() { return store::LatestActuatorReportId(s_.txn); }

FeedRead ChangeLogRepository::ReadSince(int64_t after, int limit) {
  return ReadChangesSince(s_.txn, after, limit);
}

absl::StatusOr<WorkspaceHistoryRead>
ChangeLogRepository::ReadWorkspaceHistory(int64_t after, int limit) {
  return store::ReadWorkspaceHistory(s_.txn, after, limit);
}

absl::StatusOr<NodeHistoryRead>
ChangeLogRepository::ReadNodeHistory(int64_t after, int limit) {
  return store::ReadNodeHistory(s_.txn, after, limit);
}

int64_t ChangeLogRepository::Head() { return FeedHead(s_.txn); }

int64_t ChangeLogRepository::Prune(absl::Duration keep_for) { return PruneChangeLog(s_.txn, keep_for); }

// ---- audit
void AuditRepository::Append(const core::AuditRecord& record) { InsertAuditRecord(s_.txn, record); }
std::vector<core::AuditRecord> AuditRepository::List(const AuditFilter& filter, int64_t before_id, int limit) {
  return ListAuditRecords(s_.txn, filter, before_id, limit);
}
int64_t AuditRepository::DeleteOlderThan(absl::Duration retention, int limit) {
  return DeleteOldAuditRecords(s_.txn, retention, limit);
}

// ---- usage
absl::StatusOr<std::vector<core::UsageRecord>> UsageRepository::List(const UsageFilter& filter,
                                                               const std::optional<UsageCursor>& after,
                                                               int limit) {
  return ListUsageRecords(s_.txn, filter, after, limit);
}
absl::StatusOr<std::vector<core::UsageSummaryRow>> UsageRepository::Summarize(const UsageSummaryRequest& request) {
  return SummarizeUsage(s_.txn, request);
}
bool UsageRepository::KnownTimeZone(const std::string& name) { return store::KnownTimeZone(s_.txn, name); }
int64_t UsageRepository::DeleteOlderThan(absl::Duration retention, int limit) {
  return DeleteOldUsageRecords(s_.txn, retention, limit);
}

SpendingReading UsageRepository::ReadSpending(const std::string& kind, const std::string& id,
                                              absl::Time period_start) {
  return store::ReadSpending(s_.txn, kind, id, period_start);
}

int64_t UsageRepository::AdmissionSpent(const std::string& kind, const std::string& id,
                                        absl::Time period_start,
                                        absl::Duration committed_interval) {
  return ReadAdmissionSpent(s_.txn, kind, id, period_start, committed_interval);
}

absl::Time UsageRepository::DatabaseNow() { return store::DatabaseNow(s_.txn); }

// ---- node credentials
std::optional<NodeCredentialRow> NodeCredentialRepository::Issue(const std::string& node,
                                                                 const std::string& token_sha256,
                                                                 const std::string& issued_by) {
  return InsertNodeCredential(s_.txn, node, token_sha256, issued_by, s_.changes);
}
std::optional<NodeCredentialRow> NodeCredentialRepository::Replace(const std::string& node,
                                                                   const std::string& token_sha256,
                                                                   const std::string& issued_by) {
  return ReplaceNodeCredential(s_.txn, node, token_sha256, issued_by, s_.changes);
}
bool NodeCredentialRepository::Revoke(const std::string& node) {
  return DeleteNodeCredential(s_.txn, node, s_.changes);
}
std::vector<NodeCredentialRow> NodeCredentialRepository::Load(const std::vector<std::string>& nodes) {
  return LoadNodeCredentials(s_.txn, nodes);
}

// ---- the unit

UnitOfWork::UnitOfWork(UnitSession& session)
    : catalog_(session),
      settings_(session),
      nodes_(session),
      workspaces_(session),
      timings_(session),
      scaling_(session),
      change_log_(session),
      usage_(session),
      audit_(session),
      budget_(session),
      node_credentials_(session) {}

absl::Status UnitOfWork::Run(Database& db, absl::string_view what, const Body& body, Mode mode,
                            Bound bound) {
  return InTransaction(db, what, bound == Bound::kLong ? db.bounds().sweep : db.bounds().call,
                       [&](pqxx::work& txn) -> absl::Status {
    if (mode == Mode::kSnapshot) txn.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    UnitSession session{txn, {}};
    UnitOfWork unit(session);
    absl::Status status = body(unit);
    // Last: publishing locks the change-log head until COMMIT, which
    // orders entries by commit (change_log.h).
    if (status.ok()) PublishChanges(txn, session.changes);
    return status;
  });
}

}  // namespace wsched::store
