// The spending limits a group commit admits GPU placements against
// (docs/billing.md "Spending limits"): the batch's guards read the limits
// of its GPU placements' orgs and projects, the batch takes those orgs'
// advisory locks, then this reads what each limit's period has spent and
// admits placement by placement, counting each admitted one as spent for
// the rest of the batch. Racing replicas serialize on the org's lock, so
// together they cannot spend past a limit.
#ifndef WSCHED_SERVER_STORE_BATCH_BUDGETS_H_
#define WSCHED_SERVER_STORE_BATCH_BUDGETS_H_

#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/core/spending_limit.h"
#include "server/core/workspace.h"
#include "server/store/statement_pipeline.h"

namespace wsched::store {

// What the period of `scope`'s ("org" or "project") limit, from
// `period_start`, has spent as BatchBudgets admits against it (running
// placements count at least their first `committed_interval`), in
// GPU-microseconds: what a pending workspace is told it waits for.
int64_t ReadAdmissionSpent(pqxx::work& txn, const std::string& scope, const std::string& id,
                           absl::Time period_start, absl::Duration committed_interval);

class BatchBudgets {
 public:
  // A running placement counts at least its first `committed_interval` as
  // spent, and a new one commits to that much when admitted.
  explicit BatchBudgets(absl::Duration committed_interval) : interval_(committed_interval) {}

  // The statement QueueSpent runs, prepared with the batch's others.
  static const Statement& SpentStatement();

  // A limit the guards read: `scope` "org" or "project", its stored
  // document, and the transaction's now() (the ledger's clock).
  void AddLimit(const std::string& scope, const std::string& id, const std::string& document,
                absl::Time now);
  bool empty() const { return budgets_.empty(); }
  // Whether a placement of `w` is judged against a limit: its org must then
  // be locked (a project's limit is judged under its org's lock too).
  bool Limits(const core::Workspace& w) const;

  // Queues what each limit's period has spent; send it under the locks.
  std::optional<StatementPipeline::Id> QueueSpent(StatementPipeline& pipeline) const;
  void ReadSpent(const pqxx::result& rows);

  // A placement of `sevenths` GPU sevenths against its org's and project's
  // limits: OK and counted as spent, or BUDGET_EXHAUSTED (or why a limit
  // cannot be judged). Nothing is counted when either refuses.
  absl::Status Admit(const core::Workspace& w, int64_t sevenths);

 private:
  struct Budget {
    core::SpendingLimit limit;
    core::PeriodBounds period;
    int64_t spent = 0;  // GPU-microseconds, this batch's admissions included.
    // Why the limit cannot be judged (a damaged document, a time zone this
    // replica does not know): its placements are refused with it, the
    // batch's others go on.
    absl::Status problem;
  };
  using Key = std::pair<std::string, std::string>;  // ("org" | "project", id)

  const absl::Duration interval_;
  std::map<Key, Budget> budgets_;
  absl::Time now_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_BATCH_BUDGETS_H_
