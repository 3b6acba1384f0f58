// Spending limits on a replay (docs/scaling.md "Replaying a spending
// limit"): each limited org's GPU-microseconds in its limit's period, from
// the simulated placements, judged by the server's own rules
// (core/spending_limit.h): a GPU placement is admitted only while what was
// spent plus what it commits to for its first interval stays within the
// limit; block_and_stop also stops the org's running workspaces once the
// limit is reached and its warning has passed.
//
// Pure: every time is given. Spent is counted per org, not per project.
#ifndef WSCHED_SERVER_SIMULATE_ORG_BUDGETS_H_
#define WSCHED_SERVER_SIMULATE_ORG_BUDGETS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "server/core/spending_limit.h"

namespace wsched::simulate {

// What a limit did over a replay.
struct BudgetResult {
  std::string org;
  core::SpendingLimit limit;
  int64_t refused = 0;    // Arrivals refused (BUDGET_EXHAUSTED).
  int64_t held_back = 0;  // Queued workspaces a drain left queued at the limit.
  int64_t stopped = 0;    // Running workspaces stopped by block_and_stop.
  // The most GPU-microseconds spent in one period, and the limit's.
  int64_t most_spent = 0;
  int64_t limit_micros = 0;
};

class OrgBudgets {
 public:
  // `interval`: what a new placement commits to (--budget_interval).
  OrgBudgets(std::map<std::string, core::SpendingLimit> limits, absl::Duration interval);

  bool Limited(const std::string& org) const { return books_.contains(org); }
  // Whether `org` may place `gpu_sevenths` more now. Unlimited orgs and
  // placements without GPUs always may.
  bool Admits(const std::string& org, int64_t gpu_sevenths, absl::Time now);
  // A workspace `id` of `org` holding `gpu_sevenths` starts or ends running.
  void Started(const std::string& org, const std::string& id, int64_t gpu_sevenths, absl::Time now);
  void Ended(const std::string& org, const std::string& id, absl::Time now);
  // A refused arrival, a held-back queued workspace, a stopped one.
  void Refused(const std::string& org) { ++books_.at(org).result.refused; }
  void HeldBack(const std::string& org, const std::string& id) {
    Book& book = books_.at(org);
    if (book.held_back.insert(id).second) ++book.result.held_back;
  }
  void Stopped(const std::string& org) { ++books_.at(org).result.stopped; }

  // block_and_stop, as the server's enforcer does it: when the limit will
  // be reached at the current rate of spending (now when it is); nullopt
  // for block_new, once the org was warned, or when not this period.
  std::optional<absl::Time> NextReach(const std::string& org, absl::Time now);
  // The limit is reached: the running workspaces are warned now.
  void Warn(const std::string& org) { books_.at(org).warned = true; }
  // The warning has passed: whether the running workspaces are stopped
  // (the limit still reached: not raised, the period not over). Either
  // way the warning is over.
  bool StopDue(const std::string& org, absl::Time now);
  // Whether the limit is reached now (spent at or past it).
  bool Reached(const std::string& org, absl::Time now);
  // The end of the period `now` is in (when a held-back workspace may go).
  absl::Time PeriodEnd(const std::string& org, absl::Time now) const;
  // The ids running for `org` now.
  std::vector<std::string> Running(const std::string& org) const;

  std::vector<BudgetResult> Finish(absl::Time end);

 private:
  struct Run {
    absl::Time start;
    int64_t sevenths = 0;
  };
  struct PastRun {
    absl::Time start, end;
    int64_t sevenths = 0;
  };
  struct Book {
    core::SpendingLimit limit;
    int64_t limit_micros = 0;
    absl::flat_hash_map<std::string, Run> running;
    // Ended runs that may still count (ended after the oldest period start
    // still to come), in the order they ended.
    std::deque<PastRun> ended;
    bool warned = false;  // block_and_stop: warned, not stopped yet.
    // The calendar period last counted in (a month's spend is final at its end).
    std::optional<core::PeriodBounds> period;
    absl::flat_hash_set<std::string> held_back;
    BudgetResult result;
  };
  // GPU-microseconds of `book` over [from, to), as run (nothing pruned).
  static int64_t RunOver(const Book& book, absl::Time from, absl::Time to);
  // GPU-microseconds of `book` inside [period start, now); `committed`:
  // each running workspace at least its first interval (admission).
  int64_t Spent(Book& book, absl::Time now, bool committed);
  int64_t PerHour(const Book& book) const;

  std::map<std::string, Book> books_;
  const absl::Duration interval_;
};

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_ORG_BUDGETS_H_
