#include "server/scheduler/scaling_controller.h"

#include <google/protobuf/util/time_util.h>

#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/scaling/demand_pool.h"
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

v1::PoolSignal ToProto(const scaling::PoolSignal& signal, int64_t generation) {
  v1::PoolSignal out;
  out.set_pool(signal.pool);
  out.set_generation(generation);
  out.set_current_size(signal.current_size);
  out.set_target_size(signal.target_size);
  for (const auto& node : signal.nodes_to_remove) out.add_nodes_to_remove(node);
  for (const auto& node : signal.lost_nodes) out.add_lost_nodes(node);
  for (auto reason : signal.reasons) {
    // The proto enum is the core enum shifted by UNSPECIFIED = 0.
    out.add_reasons(static_cast<v1::ScalingReason>(static_cast<int>(reason) + 1));
  }
  out.set_detail(signal.detail);
  if (signal.backoff_until) {
    *out.mutable_backoff_until() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(
        absl::ToUnixMicros(*signal.backoff_until));
  }
  return out;
}

// Workspaces holding this node's GPUs, each counted once (a node has a
// handful of GPUs: comparing pairs beats building a set).
int DistinctGpuHolders(const placement::SnapshotNode& node) {
  int distinct = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const std::string& holder = node.gpus[i].holder;
    if (holder.empty()) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = node.gpus[j].holder == holder;
    if (!seen) ++distinct;
  }
  return distinct;
}

scaling::PoolNode ObservedNode(const placement::SnapshotNode& node) {
  scaling::PoolNode out;
  out.name = node.info.name;
  out.state = node.state;
  scaling::Capacity free;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    if (node.gpus[i].holder.empty() && node.info.gpus[i].healthy) free.gpus++;
  }
  // Lost workspaces keep their holds until stopped or moved, so a lost
  // node still counts them here and the scaler asks for its replacement.
  out.workspaces = DistinctGpuHolders(node);
  if (out.workspaces == 0 && node.held.cpu_millis > 0) out.workspaces = 1;
  free.cpu_millis = node.free.cpu_millis;
  free.memory_bytes = node.free.memory_bytes;
  free.ephemeral_storage_bytes = node.free.ephemeral_storage_bytes;
  free.disk_bytes = node.free.disk_bytes;
  out.free = free;
  return out;
}

}  // namespace

ScalingController::ScalingController(store::Database* db, Scheduler* scheduler,
                                     metrics::Metrics* metrics, ScalingControllerOptions options)
    : db_(db),
      scheduler_(scheduler),
      metrics_(metrics),
      options_(std::move(options)),
      leader_lock_(db->url(), kScalingLeaderKey),
      retention_(std::make_unique<WorkspaceRetention>(
          db, options_.retention, [this] { return leading_now_.load(); })) {}

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
  loop_ = std::thread([this] { Loop(); });
  retention_->Start();
  return absl::OkStatus();
}

void ScalingController::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  retention_->Stop();
  if (loop_.joinable()) loop_.join();
  if (actuator_) actuator_->Stop();
  leader_lock_.Release();
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

int64_t ScalingController::WaitForChange(int64_t after, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || version_ > after; };
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
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
  absl::Time next_follow = absl::InfinitePast();
  while (!stopping()) {
    absl::Time now = absl::Now();
    bool lead = leader_lock_.TryAcquire();
    if (lead && !leading_) BecomeLeader();
    if (!lead && leading_) log::Warning("lost scaling leadership");
    leading_ = lead;
    leading_now_ = lead;
    if (leading_) {
      LeadTick(now);
    } else if (now >= next_follow) {
      next_follow = now + absl::Seconds(1);
      FollowTick();
    }
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.tick);
  }
}

void ScalingController::BecomeLeader() {
  log::Info("scaling leadership acquired", {{"replica", store::ReplicaId()}});
  tracking_.clear();
  std::vector<store::StoredSignal> stored;
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
  for (const auto& signal : stored) tracking_[signal.pool].generation_base = signal.generation;
}

void ScalingController::FollowTick() {
  std::vector<store::StoredSignal> stored;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading scaling signals",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto signals = unit.scaling().LoadSignals();
    if (!signals.ok()) return signals.status();
    stored = std::move(*signals);
    return absl::OkStatus();
  });
  if (!status.ok()) return;
  absl::MutexLock lock(&mu_);
  for (const auto& row : stored) {
    v1::PoolSignal signal = ToProto(row.signal, row.generation);
    auto it = published_.find(row.pool);
    if (it == published_.end() || it->second.generation() != signal.generation()) {
      published_[row.pool] = signal;
      version_++;
    }
    leader_ = row.leader;
  }
}

std::vector<scaling::PoolObservation> ScalingController::Observe(absl::Time now) {
  std::map<std::string, std::vector<scaling::PoolNode>> nodes;
  // One immutable view (no placement lock held while walking it).
  const std::shared_ptr<const ClusterView> view = scheduler_->View();
  const core::Catalog& catalog = *view->catalog;
  {
    const placement::Snapshot& snapshot = view->snapshot;
    const std::string* pool_name = nullptr;
    std::vector<scaling::PoolNode>* pool_nodes = nullptr;
    snapshot.ForEachNode([&](const placement::SnapshotNode& node) {
      // Consecutive nodes mostly share a pool: look it up when it changes.
      if (pool_name == nullptr || *pool_name != node.info.pool) {
        pool_name = &node.info.pool;
        pool_nodes = &nodes[node.info.pool];
      }
      pool_nodes->push_back(ObservedNode(node));
    });
  }
  // Pending work counts as demand on its preferred pool that can grow now:
  // below max_size and not backing off (scaling/demand_pool.h).
  auto can_grow = [&](const std::string& pool_id) {
    const core::NodePool* pool = catalog.FindPool(pool_id);
    if (pool == nullptr || static_cast<int>(nodes[pool_id].size()) >= pool->max_size) return false;
    auto tracked = tracking_.find(pool_id);
    return tracked == tracking_.end() || tracked->second.scaler == nullptr ||
           !tracked->second.scaler->BackoffUntil(now).has_value();
  };
  std::map<std::string, std::map<std::string, int64_t>> pending;
  for (const auto& demand : view->pending) {
    std::string pool = scaling::DemandPool(demand.pools, can_grow);
    if (!pool.empty()) pending[pool][demand.class_id]++;
  }
  std::vector<scaling::PoolObservation> observations;
  for (const core::NodePool& pool : catalog.pools) {
    PoolTracking& t = tracking_[pool.id];
    if (t.scaler == nullptr) t.scaler = std::make_unique<scaling::PoolScaler>(options_.scaler);
    scaling::PoolObservation obs;
    obs.pool = pool;
    // Views into nodes[pool.id], which outlives this loop.
    absl::flat_hash_set<absl::string_view> present;
    for (scaling::PoolNode& node : nodes[pool.id]) {
      present.insert(node.name);
      auto [seen, is_new] = t.first_seen.try_emplace(node.name, now);
      if (is_new && !t.in_flight.empty()) {
        // A node we asked for: its start time is measured from the request.
        seen->second = t.in_flight.front().requested_at;
        if (--t.in_flight.front().count <= 0) t.in_flight.erase(t.in_flight.begin());
      } else if (is_new && node.state != core::NodeState::kProvisioning) {
        // Up before this leader looked (a restart, a new leader, a node
        // added by hand): when it was asked for is unknown, so it is no
        // start-time sample (it would count as a start of zero seconds).
        seen->second = absl::InfinitePast();
      }
      node.requested_at = seen->second;
      if (node.state == core::NodeState::kReady) node.ready_at = is_new ? now : seen->second;
      if (node.workspaces > 0) {
        t.empty_since.erase(node.name);
      } else {
        node.empty_since = t.empty_since.try_emplace(node.name, now).first->second;
      }
      obs.nodes.push_back(node);
    }
    absl::erase_if(t.first_seen, [&](const auto& kv) { return !present.contains(kv.first); });
    absl::erase_if(t.empty_since, [&](const auto& kv) { return !present.contains(kv.first); });
    for (const auto& [class_id, count] : pending[pool.id]) {
      if (const core::WorkspaceClass* cls = catalog.FindClass(class_id)) {
        obs.pending.push_back({*cls, count});
      }
    }
    obs.in_flight = t.in_flight;
    observations.push_back(std::move(obs));
  }
  return observations;
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
    auto it = tracking_.find(report.pool);
    if (!kind || it == tracking_.end() || it->second.scaler == nullptr) continue;
    it->second.scaler->OnActuatorEvent({*kind, report.instances, report.detail}, now);
  }
  for (const scaling::PoolObservation& obs : Observe(now)) {
    PoolTracking& t = tracking_[obs.pool.id];
    scaling::PoolSignal signal = t.scaler->Evaluate(obs, now);
    RecordStartSamples(obs.pool.id, t.scaler->TakeNewStartSamples());
    {
      absl::MutexLock lock(&mu_);
      estimates_[obs.pool.id] = t.scaler->EstimatePlacementDelay();
      auto it = published_.find(obs.pool.id);
      bool changed = it == published_.end() ||
                     it->second.generation() != t.generation_base + signal.generation ||
                     leader_ != store::ReplicaId();
      if (!changed) continue;
    }
    // Count what a scale-up asks for, so a burst does not ask twice.
    int in_flight = 0;
    for (const auto& request : t.in_flight) in_flight += request.count;
    int live = 0;
    for (const auto& node : obs.nodes) live += node.state != core::NodeState::kLost;
    if (signal.target_size > live + in_flight) {
      t.in_flight.push_back({now, signal.target_size - live - in_flight});
      absl::Time oldest = now;
      for (const auto& demand : scheduler_->Pending()) {
        if (!demand.pools.empty() && demand.pools.front() == obs.pool.id) oldest = std::min(oldest, demand.since);
      }
      metrics_->ObservePendingToScaleUp(obs.pool.id, now - oldest);
    }
    Publish(obs.pool.id, signal, now);
  }
}

void ScalingController::RecordStartSamples(const std::string& pool,
                                           const std::vector<absl::Duration>& samples) {
  if (samples.empty()) return;
  absl::Status saved = store::UnitOfWork::Run(*db_, "recording node start times",
                                              [&](store::UnitOfWork& unit) -> absl::Status {
    for (absl::Duration took : samples) {
      unit.timings().Record(store::TimingKind::kNodeStart, pool, "", took);
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
  PoolTracking& t = tracking_[pool];
  int64_t generation = t.generation_base + signal.generation;
  v1::PoolSignal proto = ToProto(signal, generation);
  absl::Status saved = store::UnitOfWork::Run(*db_, "publishing scaling signal",
                                              [&](store::UnitOfWork& unit) -> absl::Status {
    scaling::PoolSignal published = signal;
    published.generation = generation;
    unit.scaling().SaveSignal({pool, generation, std::move(published), store::ReplicaId()});
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
    published_[pool] = proto;
    leader_ = store::ReplicaId();
    version_++;
  }
  if (actuator_ != nullptr) {
    scaling::PoolSignal outgoing = signal;
    outgoing.generation = generation;
    if (absl::Status s = actuator_->Submit(outgoing); !s.ok()) {
      log::Warning("actuator refused signal", {{"pool", pool}, {"error", std::string(s.message())}});
    }
  }
}

}  // namespace wsched::scheduler
