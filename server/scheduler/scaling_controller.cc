#include "server/scheduler/scaling_controller.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/process/thread_priority.h"
#include "server/scheduler/signal_rows.h"
#include "server/store/change_feed.h"
#include "server/store/unit_of_work.h"

namespace wsched::scheduler {
namespace {

constexpr int64_t kScalingLeaderKey = 0x77736368'6c656164;  // "wschlead"

std::optional<scaling::ActuatorEventKind> EventKind(const std::string& state) {
  if (state == "creating") return scaling::ActuatorEventKind::kCreating;
  if (state == "running") return scaling::ActuatorEventKind::kRunning;
  if (state == "failed") return scaling::ActuatorEventKind::kFailed;
  if (state == "out_of_resources") return scaling::ActuatorEventKind::kOutOfResources;
  return std::nullopt;
}

}  // namespace

ScalingController::ScalingController(store::Database* db, Scheduler* scheduler,
                                     metrics::Metrics* metrics, ScalingControllerOptions options)
    : db_(db),
      scheduler_(scheduler),
      metrics_(metrics),
      options_(std::move(options)),
      election_(db->url(), kScalingLeaderKey, options_.tick, options_.lease, metrics),
      retention_(std::make_unique<WorkspaceRetention>(db, options_.retention,
                                                      [this] { return LeadsNow(); })),
      budget_(std::make_unique<BudgetEnforcer>(
          db, metrics, options_.budget,
          [scheduler](const std::string& workspace, int64_t version) {
            return scheduler->pipeline()
                .stops()
                .Stop(workspace, core::EndReason::kBudget, version)
                .status();
          },
          [scheduler] { return scheduler->CatchUp(); },
          [this] { return LeadsNow(); })),
      fleet_(options_.scaler) {}

ScalingController::~ScalingController() { Stop(); }

absl::Status ScalingController::Start() {
  if (!options_.actuator_command.empty()) {
    scaling::ExecActuatorOptions actuator;
    actuator.command = options_.actuator_command;
    actuator.timeout = options_.actuator_timeout;
    actuator.on_attempt = [metrics = metrics_](const scaling::ActuatorAttempt& attempt) {
      metrics->ActuatorRun(attempt.pool, attempt.status.ok());
      if (!attempt.status.ok()) {
        log::Warning("actuator command failed", {{"pool", attempt.pool},
                                                 {"attempt", absl::StrCat(attempt.attempt)},
                                                 {"error", std::string(attempt.status.message())},
                                                 {"output", attempt.output_tail}});
        return;
      }
      log::Info("actuator command done", {{"pool", attempt.pool},
                                          {"generation", absl::StrCat(attempt.generation)},
                                          {"took", absl::FormatDuration(attempt.took)},
                                          {"output", attempt.output_tail}});
    };
    auto created = scaling::ExecActuator::Create(std::move(actuator));
    if (!created.ok()) return created.status();
    actuator_ = std::move(*created);
  }
  auto installs = ClusterDriverInstalls::Create(&scheduler_->inventory(), options_.cluster_installs,
                                               scheduler_->clock());
  if (!installs.ok()) return installs.status();
  cluster_installs_ = std::move(*installs);
  election_.Start();
  loop_ = std::thread([this] { Loop(); });
  retention_->Start();
  budget_->Start();
  return absl::OkStatus();
}

void ScalingController::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  retention_->Stop();
  budget_->Stop();
  if (loop_.joinable()) loop_.join();
  if (actuator_) actuator_->Stop();
  if (cluster_installs_) cluster_installs_->Stop();
  election_.Stop();
}

bool ScalingController::LeadsNow() const {
  return leading_now_.load() && election_.LeaderTerm().has_value();
}

bool ScalingController::stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

ScalingController::State ScalingController::Current() const {
  absl::MutexLock lock(&mu_);
  State state;
  for (const auto& [pool, signal] : published_) state.pools.push_back(signal);
  state.leader = leader_;
  state.version = version_;
  return state;
}

int64_t ScalingController::WaitForChange(int64_t after, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || version_ > after; };
  mu_.AwaitWithTimeout(absl::Condition(&changed), timeout);
  return version_;
}

absl::Status ScalingController::Report(const store::ActuatorReportRow& report) {
  return store::UnitOfWork::Run(*db_, "recording actuator report",
                                [&](store::UnitOfWork& unit) -> absl::Status {
    unit.scaling().SaveActuatorReport(report);
    return absl::OkStatus();
  });
}

std::optional<absl::Duration> ScalingController::EstimateDelay(const std::string& pool) const {
  absl::MutexLock lock(&mu_);
  auto it = estimates_.find(pool);
  if (it != estimates_.end() && it->second) return it->second;
  return options_.scaler.default_time_to_ready;
}

void ScalingController::Loop() {
  if (options_.nice_increment > 0) {
    if (absl::Status lowered = process::LowerCurrentThreadPriority(options_.nice_increment);
        !lowered.ok()) {
      log::Warning("scaling loop keeps the serving threads' CPU priority",
                   {{"error", std::string(lowered.message())}});
    }
  }
  absl::Time next_follow = absl::InfinitePast();
  while (!stopping()) {
    // The scheduler's clock: the nodes' and the queue's times it observes
    // are read from it too.
    const absl::Time now = scheduler_->clock()();
    const std::optional<int64_t> term = election_.LeaderTerm();
    // A term this loop has not loaded for: it lost the lead in between (or
    // never had it), and another leader may have changed what it keeps.
    if (term.has_value() && term != led_term_) BecomeLeader();
    led_term_ = term;
    leading_now_ = term.has_value();
    if (term.has_value()) {
      LeadTick(now);
      if (lead_ticks_ % std::max(options_.relayout_every_ticks, 1) == 0) StepRelayouts(now);
      if (lead_ticks_++ % std::max(options_.driver_rollout_every_ticks, 1) == 0) {
        StepDrivers();
      }
    } else if (now >= next_follow) {
      next_follow = now + absl::Seconds(1);
      FollowTick();
    }
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.tick);
  }
}

void ScalingController::StepDrivers() {
  auto views = scheduler_->rollouts().Step();
  if (!views.ok()) {
    log::Warning("cannot step driver rollouts", {{"error", std::string(views.status().message())}});
  } else {
    for (const inventory::DriverRolloutView& view : *views) {
      metrics_->DriverRolloutObserved(view.pool, view.counts.waiting, view.counts.in_flight,
                                      view.counts.failed, view.record.paused);
    }
  }
  if (cluster_installs_ == nullptr) return;
  if (absl::Status stepped = cluster_installs_->Step(); !stepped.ok()) {
    log::Warning("cannot offer cluster driver installs",
                 {{"error", std::string(stepped.message())}});
  }
}

void ScalingController::BecomeLeader() {
  fleet_.Clear();
  generation_base_.clear();
  published_relayouts_.reset();  // Its mirror has what the last leader published.
  std::vector<store::SignalRow> stored;
  absl::Status status = store::UnitOfWork::Run(*db_, "loading scaling state",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    last_report_id_ = unit.scaling().LatestActuatorReportId();
    auto signals = unit.scaling().LoadSignals();
    if (!signals.ok()) return signals.status();
    stored = std::move(*signals);
    return absl::OkStatus();
  });
  if (!status.ok()) log::Warning("cannot load scaling state", {{"error", std::string(status.message())}});
  // Generations continue from the previous leader's, so watchers see them grow.
  for (const auto& signal : stored) generation_base_[signal.pool] = signal.generation;
}

void ScalingController::FollowTick() {
  std::vector<store::SignalRow> stored;
  std::vector<store::RelayoutRow> relayouts;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading scaling signals",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto signals = unit.scaling().LoadSignals();
    if (!signals.ok()) return signals.status();
    stored = std::move(*signals);
    auto orders = unit.scaling().LoadRelayouts();
    if (!orders.ok()) return orders.status();
    relayouts = std::move(*orders);
    return absl::OkStatus();
  });
  if (!status.ok()) return;
  // The leader's MIG re-layouts: this replica keeps placement off their
  // GPUs and hands them to the nodes' agents.
  std::vector<placement::RelayoutOrder> orders;
  for (const store::RelayoutRow& row : relayouts) orders.push_back(RelayoutOrderOf(row));
  scheduler_->mirror().SetRelayouts(std::move(orders));
  absl::MutexLock lock(&mu_);
  for (const auto& row : stored) {
    scaling::PoolSignal signal = PoolSignalOf(row);
    auto it = published_.find(row.pool);
    if (it == published_.end() || it->second.generation != signal.generation) {
      published_[row.pool] = std::move(signal);
      version_++;
    }
    leader_ = row.leader;
  }
}

std::vector<scaling::PoolObservation> ScalingController::Observe(absl::Time now) {
  // One immutable view (no placement lock held while walking it).
  const std::shared_ptr<const replica::ClusterView> view = scheduler_->mirror().View();
  return fleet_.Observe(*view->catalog, view->snapshot, view->pending, now);
}

void ScalingController::LeadTick(absl::Time now) {
  std::vector<store::ActuatorReportRow> reports;
  (void)store::UnitOfWork::Run(*db_, "reading actuator reports",
                               [&](store::UnitOfWork& unit) -> absl::Status {
    reports = unit.scaling().LoadActuatorReports(last_report_id_);
    return absl::OkStatus();
  });
  for (const auto& report : reports) {
    last_report_id_ = report.id;
    auto kind = EventKind(report.state);
    if (!kind) continue;
    fleet_.OnActuatorEvent(report.pool, {*kind, report.instances, report.detail, report.generation},
                           now);
  }
  for (const scaling::PoolObservation& obs : Observe(now)) {
    scaling::PoolSignal signal = fleet_.Evaluate(obs, now);
    scaling::PoolScaler& scaler = *fleet_.scaler(obs.pool.id);
    RecordStartSamples(obs.pool.id, scaler.TakeNewStartSamples(),
                       fleet_.TakeNewStartPhaseSamples(obs.pool.id));
    {
      absl::MutexLock lock(&mu_);
      estimates_[obs.pool.id] = scaler.EstimatePlacementDelay();
      auto it = published_.find(obs.pool.id);
      bool changed = it == published_.end() ||
                     it->second.generation != generation_base_[obs.pool.id] + signal.generation ||
                     leader_ != store::ReplicaId();
      if (!changed) continue;
    }
    // As the actuator sees the signal: its RUNNING report names this
    // generation.
    scaling::PoolSignal handed = signal;
    handed.generation += generation_base_[obs.pool.id];
    if (fleet_.RecordHandedOn(obs, handed, now) > 0) {
      absl::Time oldest = now;
      const std::shared_ptr<const replica::ClusterView> view = scheduler_->mirror().View();
      for (const auto& demand : view->pending) {
        if (!demand.pools.empty() && demand.pools.front() == obs.pool.id) oldest = std::min(oldest, demand.since);
      }
      metrics_->ObservePendingToScaleUp(obs.pool.id, now - oldest);
    }
    Publish(obs.pool.id, signal, now);
  }
}

void ScalingController::StepRelayouts(absl::Time now) {
  // Acts only on a lease that runs, as Publish.
  if (!election_.LeaderTerm().has_value()) return;
  replica::ReplicaMirror::RelayoutStep step = scheduler_->mirror().StepRelayouts(
      now, options_.relayout_give_up_after, options_.relayout_limits);
  for (const auto& [order, why] : step.ended) {
    if (why == "done") {
      log::Info("MIG re-layout done", {{"order", placement::DescribeOrder(order)}});
    } else {
      log::Warning("MIG re-layout dropped", {{"order", placement::DescribeOrder(order)},
                                             {"for", order.for_profile}, {"why", why}});
    }
  }
  for (size_t i = step.orders.size() - step.planned; i < step.orders.size(); ++i) {
    log::Info("MIG re-layout ordered", {{"order", placement::DescribeOrder(step.orders[i])},
                                        {"for", step.orders[i].for_profile}});
  }
  if (published_relayouts_ == step.orders) return;
  std::vector<store::RelayoutRow> rows;
  for (const placement::RelayoutOrder& order : step.orders) {
    rows.push_back(RelayoutRowOf(order, store::ReplicaId()));
  }
  std::vector<store::RelayoutRow> stored;
  absl::Status saved = store::UnitOfWork::Run(*db_, "publishing MIG re-layouts",
                                              [&](store::UnitOfWork& unit) -> absl::Status {
    stored = unit.scaling().ReplaceRelayouts(rows);
    return absl::OkStatus();
  });
  // Not saved: the next step publishes again (this mirror keeps the orders,
  // and hands them to the agents whose heartbeats reach it meanwhile).
  if (!saved.ok()) {
    log::Warning("cannot publish MIG re-layouts", {{"error", std::string(saved.message())}});
    return;
  }
  // A GPU another replica placed on before this mirror saw it: not stored,
  // never handed out; the next step sees the hold and ends the order.
  std::vector<placement::RelayoutOrder> published;
  for (const store::RelayoutRow& row : stored) published.push_back(RelayoutOrderOf(row));
  if (stored.size() < rows.size()) {
    log::Warning("MIG re-layouts not published: their GPUs hold work",
                 {{"ordered", absl::StrCat(rows.size())}, {"published", absl::StrCat(stored.size())}});
  }
  scheduler_->mirror().MarkPublished(published);
  published_relayouts_ = std::move(step.orders);
}

void ScalingController::RecordStartSamples(const std::string& pool,
                                           const std::vector<absl::Duration>& samples,
                                           const scaling::FleetScaler::StartPhaseSamples& phases) {
  if (samples.empty() && phases.cloud_start.empty() && phases.node_boot.empty()) return;
  absl::Status saved = store::UnitOfWork::Run(*db_, "recording node start times",
                                              [&](store::UnitOfWork& unit) -> absl::Status {
    for (absl::Duration took : samples) {
      unit.timings().Record(store::TimingKind::kNodeStart, pool, "", took);
    }
    for (absl::Duration took : phases.cloud_start) {
      unit.timings().Record(store::TimingKind::kCloudStart, pool, "", took);
    }
    for (absl::Duration took : phases.node_boot) {
      unit.timings().Record(store::TimingKind::kNodeBoot, pool, "", took);
    }
    return absl::OkStatus();
  });
  // An estimate, not a decision: a lost sample is logged, not retried.
  if (!saved.ok()) {
    log::Warning("node start times not recorded",
                 {{"pool", pool}, {"error", std::string(saved.message())}});
  }
}

void ScalingController::Publish(const std::string& pool, const scaling::PoolSignal& signal,
                                absl::Time now) {
  // Acts only on a lease that runs (store/lock_lease.h): the tick may have
  // outlasted it, waiting on the database.
  if (!election_.LeaderTerm().has_value()) return;
  const int64_t generation = generation_base_[pool] + signal.generation;
  // As watchers and the actuator see it: the generation continues the
  // previous leader's.
  scaling::PoolSignal published = signal;
  published.generation = generation;
  absl::Status saved = store::UnitOfWork::Run(*db_, "publishing scaling signal",
                                              [&](store::UnitOfWork& unit) -> absl::Status {
    store::SignalRow row = SignalRowOf(signal, generation, store::ReplicaId());
    row.pool = pool;
    unit.scaling().SaveSignal(row);
    return absl::OkStatus();
  });
  if (!saved.ok()) {
    log::Warning("cannot publish scaling signal", {{"pool", pool}, {"error", std::string(saved.message())}});
    return;
  }
  std::string direction = signal.target_size > signal.current_size   ? "up"
                          : !signal.nodes_to_remove.empty() ||
                                  signal.target_size < signal.current_size
                              ? "down"
                              : "steady";
  metrics_->ObserveScalingSignal(pool, direction, scaling::JoinReasonNames(signal.reasons),
                                 signal.current_size, signal.target_size);
  log::Info("scaling signal", {{"pool", pool},
                               {"generation", absl::StrCat(generation)},
                               {"current", absl::StrCat(signal.current_size)},
                               {"target", absl::StrCat(signal.target_size)},
                               {"remove", absl::StrCat(signal.nodes_to_remove.size())},
                               {"lost", absl::StrCat(signal.lost_nodes.size())},
                               {"detail", signal.detail}});
  {
    absl::MutexLock lock(&mu_);
    published_[pool] = published;
    leader_ = store::ReplicaId();
    version_++;
  }
  if (actuator_ != nullptr && election_.LeaderTerm().has_value()) {
    if (absl::Status s = actuator_->Submit(published); !s.ok()) {
      log::Warning("actuator refused signal", {{"pool", pool}, {"error", std::string(s.message())}});
    }
  }
}

}  // namespace wsched::scheduler
