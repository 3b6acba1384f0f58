#include "server/simulate/org_budgets.h"

#include <algorithm>
#include <utility>

namespace wsched::simulate {
namespace {

// GPU-microseconds of `sevenths` held over [from, to) (none when empty).
int64_t MicrosOver(int64_t sevenths, absl::Time from, absl::Time to) {
  if (to <= from) return 0;
  return sevenths * absl::ToInt64Microseconds(to - from) / 7;
}

}  // namespace

OrgBudgets::OrgBudgets(std::map<std::string, core::SpendingLimit> limits, absl::Duration interval)
    : interval_(interval) {
  for (auto& [org, limit] : limits) {
    Book& book = books_[org];
    book.limit_micros = core::GpuMicrosOf(limit);
    book.result.org = org;
    book.result.limit = limit;
    book.result.limit_micros = book.limit_micros;
    book.limit = std::move(limit);
  }
}

int64_t OrgBudgets::RunOver(const Book& book, absl::Time from, absl::Time to) {
  int64_t spent = 0;
  for (const PastRun& run : book.ended) {
    spent += MicrosOver(run.sevenths, std::max(run.start, from), std::min(run.end, to));
  }
  for (const auto& [id, run] : book.running) {
    spent += MicrosOver(run.sevenths, std::max(run.start, from), to);
  }
  return spent;
}

int64_t OrgBudgets::Spent(Book& book, absl::Time now, bool committed) {
  // Limits were checked when the scenario was read: the period is known.
  const core::PeriodBounds period = *core::PeriodAt(book.limit.period, now);
  if (book.limit.period.kind == core::SpendingPeriod::Kind::kCalendarMonth) {
    if (book.period && book.period->start != period.start) {
      // A new month: what the last one counted in the end.
      book.result.most_spent =
          std::max(book.result.most_spent, RunOver(book, book.period->start, book.period->end));
    }
    book.period = period;
  }
  // Runs that ended before this period's start never count again (periods
  // only move forward, as the replay's clock does).
  while (!book.ended.empty() && book.ended.front().end <= period.start) book.ended.pop_front();
  int64_t spent = 0;
  for (const PastRun& run : book.ended) {
    spent += MicrosOver(run.sevenths, std::max(run.start, period.start), run.end);
  }
  // Admission counts a running workspace's first interval from its
  // placement on, as the group commit does (docs/billing.md "Spending
  // limits"); what was spent, only what it ran.
  for (const auto& [id, run] : book.running) {
    const absl::Time until = committed ? std::max(now, run.start + interval_) : now;
    spent += MicrosOver(run.sevenths, std::max(run.start, period.start), until);
  }
  if (!committed) book.result.most_spent = std::max(book.result.most_spent, spent);
  return spent;
}

int64_t OrgBudgets::PerHour(const Book& book) const {
  int64_t sevenths = 0;
  for (const auto& [id, run] : book.running) sevenths += run.sevenths;
  return core::CommittedGpuMicros(sevenths, absl::Hours(1));
}

bool OrgBudgets::Admits(const std::string& org, int64_t gpu_sevenths, absl::Time now) {
  auto it = books_.find(org);
  if (it == books_.end() || gpu_sevenths <= 0) return true;
  Book& book = it->second;
  return core::AdmitsWithinBudget({.limit = book.limit_micros,
                                   .spent = Spent(book, now, /*committed=*/true),
                                   .committed = core::CommittedGpuMicros(gpu_sevenths, interval_)});
}

void OrgBudgets::Started(const std::string& org, const std::string& id, int64_t gpu_sevenths,
                         absl::Time now) {
  auto it = books_.find(org);
  if (it == books_.end() || gpu_sevenths <= 0) return;
  it->second.running[id] = {now, gpu_sevenths};
}

void OrgBudgets::Ended(const std::string& org, const std::string& id, absl::Time now) {
  auto it = books_.find(org);
  if (it == books_.end()) return;
  Book& book = it->second;
  auto run = book.running.find(id);
  if (run == book.running.end()) return;
  book.ended.push_back({run->second.start, now, run->second.sevenths});
  book.running.erase(run);
  Spent(book, now, /*committed=*/false);  // Keeps the most spent up to date.
}

bool OrgBudgets::Reached(const std::string& org, absl::Time now) {
  Book& book = books_.at(org);
  return Spent(book, now, /*committed=*/false) >= book.limit_micros;
}

std::optional<absl::Time> OrgBudgets::NextReach(const std::string& org, absl::Time now) {
  Book& book = books_.at(org);
  if (book.limit.action != core::SpendingAction::kBlockAndStop || book.warned) return std::nullopt;
  const core::PeriodBounds period = *core::PeriodAt(book.limit.period, now);
  return core::LimitReachedAt(Spent(book, now, /*committed=*/false), book.limit_micros, PerHour(book), now,
                              period.end);
}

bool OrgBudgets::StopDue(const std::string& org, absl::Time now) {
  Book& book = books_.at(org);
  const bool due = book.warned && Spent(book, now, /*committed=*/false) >= book.limit_micros;
  book.warned = false;
  return due;
}

absl::Time OrgBudgets::PeriodEnd(const std::string& org, absl::Time now) const {
  return core::PeriodAt(books_.at(org).limit.period, now)->end;
}

std::vector<std::string> OrgBudgets::Running(const std::string& org) const {
  std::vector<std::string> ids;
  for (const auto& [id, run] : books_.at(org).running) ids.push_back(id);
  std::sort(ids.begin(), ids.end());  // The replay stays deterministic.
  return ids;
}

std::vector<BudgetResult> OrgBudgets::Finish(absl::Time end) {
  std::vector<BudgetResult> results;
  for (auto& [org, book] : books_) {
    Spent(book, end, /*committed=*/false);
    results.push_back(book.result);
  }
  return results;
}

}  // namespace wsched::simulate
