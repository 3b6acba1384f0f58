// What spending limits write on running workspaces and remember
// (migrations/0023): the budget mark on a placed workspace's record, the
// thresholds told per scope, and the reads the scaling leader's budget
// pass needs (scheduler/budget_enforcer.h).
#ifndef WSCHED_SERVER_STORE_BUDGET_REPOSITORY_H_
#define WSCHED_SERVER_STORE_BUDGET_REPOSITORY_H_

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/budget_enforcement.h"
#include "server/store/change_log.h"
#include "server/store/types.h"

namespace wsched::store {

// The mark as the column stores it, and back (a damaged one is DATA_LOSS).
std::string BudgetMarkJson(const core::BudgetMark& mark);
absl::StatusOr<core::BudgetMark> ParseBudgetMarkJson(const std::string& text);

// Every org and project spending limit.
absl::StatusOr<std::vector<LimitedScope>> LoadLimitedScopes(pqxx::work& txn);

// The placed workspaces of the scope ("org" or "project" `id`) that hold
// GPUs or a slice, with their versions and marks, in id order.
absl::StatusOr<std::vector<core::BudgetedWorkspace>> RunningOfScope(pqxx::work& txn,
                                                                    const std::string& kind,
                                                                    const std::string& id);
// The placed workspaces that carry a warning mark, whatever its scope.
absl::StatusOr<std::vector<core::BudgetedWorkspace>> WarnedWorkspaces(pqxx::work& txn);

// Writes (or, with nullopt, clears) the budget mark of the placed
// workspace `id`, only at exactly `version`: its new version, or nullopt
// when it moved on or is not placed. Published like any workspace write.
std::optional<int64_t> SetBudgetMark(pqxx::work& txn, const std::string& id, int64_t version,
                                     const std::optional<core::BudgetMark>& mark,
                                     ChangeSet& changes);

// The percents of `scope` told in a period that has not ended by now().
std::vector<int> ToldThresholds(pqxx::work& txn, const std::string& scope);
// Claims `percents` of `scope` as told until `period_end`: those this call
// claimed (another transaction may have claimed some first, or told them
// in a period that has not ended).
std::vector<int> ClaimThresholds(pqxx::work& txn, const std::string& scope,
                                 const std::vector<int>& percents, absl::Time period_end);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_BUDGET_REPOSITORY_H_
