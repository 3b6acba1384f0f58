#include "server/store/batch_budgets.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "server/store/change_log.h"
#include "server/store/settings_repository.h"

namespace wsched::store {
namespace {

// What each limited org or project ($1 kinds, $2 ids) has spent since its
// period's start ($3, microseconds since the epoch), in GPU-microseconds:
// ended placements to their end, running ones to now() or to the end of
// their first $4 microseconds, whichever is later (what they committed
// to when admitted). Each placement clipped to the period's start, a slice
// its share rounded per placement as the ledger rounds it.
constexpr Statement kSpent{
    "batch_spent",
    "SELECT s.kind, s.id, COALESCE(sum(round((u.gpu_count * 7 + u.mig_compute_slices)::numeric * "
    "GREATEST(extract(epoch FROM COALESCE(u.ended_at, GREATEST(now(), u.started_at + "
    "$4::bigint * interval '1 microsecond')) - GREATEST(u.started_at, s.start)), 0) * 1000000 / "
    "7)), "
    "0)::bigint FROM (SELECT kind, id, timestamptz 'epoch' + start_us * interval '1 microsecond' "
    "AS start FROM unnest($1::text[], $2::text[], $3::bigint[]) AS t(kind, id, start_us)) s "
    "JOIN usage_intervals u ON (CASE s.kind WHEN 'org' THEN u.org_id ELSE u.project_id END) = s.id "
    "AND (u.ended_at IS NULL OR u.ended_at > s.start) GROUP BY s.kind, s.id"};

}  // namespace

const Statement& BatchBudgets::SpentStatement() { return kSpent; }

int64_t ReadAdmissionSpent(pqxx::work& txn, const std::string& scope, const std::string& id,
                           absl::Time period_start, absl::Duration committed_interval) {
  // The admission's own statement, for one scope: the two cannot disagree.
  const pqxx::result rows =
      txn.exec_params(kSpent.sql, TextArray({scope}), TextArray({id}),
                      NumberArray(std::vector<int64_t>{absl::ToUnixMicros(period_start)}),
                      absl::ToInt64Microseconds(committed_interval));
  return rows.empty() ? 0 : rows[0][2].as<int64_t>();
}

void BatchBudgets::AddLimit(const std::string& scope, const std::string& id,
                            const std::string& document, absl::Time now) {
  now_ = now;
  Budget& budget = budgets_[{scope, id}];
  auto limit = ParseSpendingLimitJson(document);
  if (!limit.ok()) {
    budget.problem = limit.status();
    return;
  }
  budget.limit = *std::move(limit);
  auto period = core::PeriodAt(budget.limit.period, now);
  if (!period.ok()) {
    budget.problem =
        absl::InternalError(absl::StrCat("the spending limit of ", scope, " ", id,
                                         " cannot be judged: ", period.status().message()));
    return;
  }
  budget.period = *period;
}

bool BatchBudgets::Limits(const core::Workspace& w) const {
  return budgets_.contains({"org", w.org_id}) || budgets_.contains({"project", w.project_id});
}

std::optional<StatementPipeline::Id> BatchBudgets::QueueSpent(StatementPipeline& pipeline) const {
  std::vector<std::string> kinds, ids;
  std::vector<int64_t> starts;
  for (const auto& [key, budget] : budgets_) {
    if (!budget.problem.ok()) continue;
    kinds.push_back(key.first);
    ids.push_back(key.second);
    starts.push_back(absl::ToUnixMicros(budget.period.start));
  }
  if (kinds.empty()) return std::nullopt;
  return pipeline.Execute(kSpent, TextArray(kinds), TextArray(ids), NumberArray(starts),
                          absl::ToInt64Microseconds(interval_));
}

void BatchBudgets::ReadSpent(const pqxx::result& rows) {
  for (const auto& row : rows) {
    budgets_[{row[0].c_str(), row[1].c_str()}].spent = row[2].as<int64_t>();
  }
}

absl::Status BatchBudgets::Admit(const core::Workspace& w, int64_t sevenths) {
  if (sevenths <= 0 || budgets_.empty()) return absl::OkStatus();
  const int64_t committed = core::CommittedGpuMicros(sevenths, interval_);
  std::vector<Budget*> admitted;
  for (const Key& key : {Key{"org", w.org_id}, Key{"project", w.project_id}}) {
    auto it = budgets_.find(key);
    if (it == budgets_.end()) continue;
    Budget& budget = it->second;
    if (!budget.problem.ok()) return budget.problem;
    const core::BudgetFigures figures{core::GpuMicrosOf(budget.limit), budget.spent, committed};
    if (!core::AdmitsWithinBudget(figures)) {
      return core::BudgetExhaustedError(key.first, key.second, w.class_id, figures, budget.period,
                                        now_);
    }
    admitted.push_back(&budget);
  }
  for (Budget* budget : admitted) budget->spent += committed;
  return absl::OkStatus();
}

}  // namespace wsched::store
