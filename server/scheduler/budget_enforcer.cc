#include "server/scheduler/budget_enforcer.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/store/unit_of_work.h"

namespace wsched::scheduler {
namespace {

// "org" of "org:o-1".
absl::string_view KindOf(absl::string_view scope) { return scope.substr(0, scope.find(':')); }

}  // namespace

BudgetEnforcer::BudgetEnforcer(store::Database* db, metrics::Metrics* metrics,
                               BudgetEnforcerOptions options, StopAt stop, CatchUp catch_up,
                               std::function<bool()> leading)
    : db_(db),
      metrics_(metrics),
      options_(options),
      stop_(std::move(stop)),
      catch_up_(std::move(catch_up)),
      leading_(std::move(leading)) {}

BudgetEnforcer::~BudgetEnforcer() { Stop(); }

void BudgetEnforcer::Start() {
  if (options_.interval <= absl::ZeroDuration() || loop_.joinable()) return;
  loop_ = std::thread([this] { Loop(); });
}

void BudgetEnforcer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (loop_.joinable()) loop_.join();
}

bool BudgetEnforcer::WaitForStop(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), timeout);
  return stopping_;
}

absl::StatusOr<BudgetEnforcer::Reading> BudgetEnforcer::Read() {
  Reading reading;
  absl::Status status = store::UnitOfWork::Run(
      *db_, "reading spending limits",
      [&](store::UnitOfWork& unit) -> absl::Status {
        auto limited = unit.budget().LoadLimitedScopes();
        if (!limited.ok()) return limited.status();
        reading.now = unit.usage().DatabaseNow();
        for (const store::LimitedScope& scope : *limited) {
          auto period = core::PeriodAt(scope.limit.period, reading.now);
          if (!period.ok()) return period.status();
          core::ScopeSpending spending{core::BudgetScope(scope.kind, scope.id), scope.limit,
                                       *period, 0};
          spending.spent = unit.usage().ReadSpending(scope.kind, scope.id, period->start).spent;
          auto running = unit.budget().RunningOf(scope.kind, scope.id);
          if (!running.ok()) return running.status();
          reading.scopes.push_back(std::move(spending));
          reading.running.push_back(*std::move(running));
        }
        auto warned = unit.budget().Warned();
        if (!warned.ok()) return warned.status();
        reading.warned = *std::move(warned);
        return absl::OkStatus();
      },
      store::UnitOfWork::Mode::kSnapshot);
  if (!status.ok()) return status;
  return reading;
}

bool BudgetEnforcer::Carry(const core::BudgetStep& step, absl::string_view scope_kind) {
  if (step.kind == core::BudgetStep::Kind::kStop) {
    absl::Status stopped = stop_(step.workspace, step.version);
    if (!stopped.ok()) {
      log::Warning("stopping a workspace at its spending limit failed",
                   {{"workspace", step.workspace}, {"error", std::string(stopped.message())}});
      return false;
    }
    log::Info("stopped a workspace at its spending limit", {{"workspace", step.workspace}});
    metrics_->ObserveBudgetStop(scope_kind);
    return true;
  }
  std::optional<int64_t> written;
  absl::Status status = store::UnitOfWork::Run(
      *db_, "marking a workspace's budget", [&](store::UnitOfWork& unit) -> absl::Status {
        written = unit.budget().SetMark(step.workspace, step.version, step.mark);
        return absl::OkStatus();
      });
  if (!status.ok()) {
    log::Warning("marking a workspace's budget failed",
                 {{"workspace", step.workspace}, {"error", std::string(status.message())}});
    return false;
  }
  if (written && step.kind == core::BudgetStep::Kind::kWarn) {
    metrics_->ObserveBudgetWarning(scope_kind);
  }
  return written.has_value();
}

absl::StatusOr<int> BudgetEnforcer::TellThresholds(
    const core::ScopeSpending& spending, const std::vector<core::BudgetedWorkspace>& running) {
  int told = 0;
  absl::Status status = store::UnitOfWork::Run(
      *db_, "telling a spending threshold", [&](store::UnitOfWork& unit) -> absl::Status {
        told = 0;
        const std::vector<int> reached =
            core::ThresholdsToTell(spending, unit.budget().Told(spending.scope));
        if (reached.empty()) return absl::OkStatus();
        // Thresholds passed together are claimed together and told as the
        // highest: a watcher learns where spending is, not each step of it.
        const std::vector<int> claimed =
            unit.budget().Claim(spending.scope, reached, spending.period.end);
        if (claimed.empty()) return absl::OkStatus();
        const int percent = *std::max_element(claimed.begin(), claimed.end());
        for (const core::BudgetedWorkspace& w : running) {
          if (core::HasWarningOfPlacement(w)) continue;
          if (unit.budget().SetMark(w.id, w.version,
                                    core::ThresholdMark(spending, percent, w.placed_at))) {
            ++told;
          }
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return told;
}

absl::StatusOr<BudgetEnforcer::PassOutcome> BudgetEnforcer::Pass() {
  auto reading = Read();
  if (!reading.ok()) return reading.status();
  PassOutcome outcome;
  std::map<std::pair<std::string, std::string>, double> ratios;
  std::vector<std::string> stopping;
  for (size_t i = 0; i < reading->scopes.size(); ++i) {
    const core::ScopeSpending& spending = reading->scopes[i];
    const absl::string_view kind = KindOf(spending.scope);
    ratios[{std::string(kind), spending.scope.substr(kind.size() + 1)}] = core::UsedRatio(spending);
    if (spending.limit.action == core::SpendingAction::kBlockAndStop) {
      stopping.push_back(spending.scope);
    }
    for (const core::BudgetStep& step :
         core::DecideBudgetStops(spending, reading->running[i], reading->now)) {
      if (!Carry(step, kind)) continue;
      if (step.kind == core::BudgetStep::Kind::kWarn) ++outcome.warned;
      if (step.kind == core::BudgetStep::Kind::kClear) ++outcome.cleared;
      if (step.kind == core::BudgetStep::Kind::kStop) ++outcome.stopped;
    }
  }
  for (const core::BudgetStep& step : core::ClearOrphanWarnings(reading->warned, stopping)) {
    if (Carry(step, "")) ++outcome.cleared;
  }
  // After the warnings: a workspace warned in this pass has moved on from
  // the version read, so a threshold does not cover its warning.
  for (size_t i = 0; i < reading->scopes.size(); ++i) {
    auto told = TellThresholds(reading->scopes[i], reading->running[i]);
    if (!told.ok()) return told.status();
    outcome.thresholds_told += *told;
  }
  metrics_->SetBudgetUsedRatios(ratios);
  if (outcome.warned + outcome.cleared + outcome.thresholds_told > 0) {
    // The marks reach this replica's watchers at once, not at the next poll.
    if (absl::Status caught_up = catch_up_(); !caught_up.ok()) return caught_up;
  }
  return outcome;
}

void BudgetEnforcer::Loop() {
  while (!WaitForStop(options_.interval)) {
    if (!leading_()) {
      // A replica that no longer leads does not go on exporting the last
      // figures it read: the leader's are the ones that count.
      metrics_->SetBudgetUsedRatios({});
      continue;
    }
    auto outcome = Pass();
    if (!outcome.ok()) {
      log::Warning("the spending limits' pass failed",
                   {{"error", std::string(outcome.status().message())}});
    }
  }
}

}  // namespace wsched::scheduler
