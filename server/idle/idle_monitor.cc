#include "server/idle/idle_monitor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/log/log.h"

namespace wsched::idle {
namespace {

using Phase = core::IdleTracker::Phase;

// Marks are stored to the microsecond; the monitor compares the stored
// one with its own, so it keeps its own to the microsecond too.
absl::Time Micros(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }
std::optional<absl::Time> Micros(const std::optional<absl::Time>& t) {
  return t ? std::optional<absl::Time>(Micros(*t)) : std::nullopt;
}

std::string TimeText(absl::Time t) { return absl::FormatTime(absl::RFC3339_sec, t, absl::UTCTimeZone()); }

// The utilisation of each of `uuids` in `samples`; nullopt for a GPU the
// heartbeat carried none for.
std::vector<std::optional<int>> UtilizationOf(const std::vector<std::string>& uuids,
                                              const std::vector<usage::GpuUsage>& samples) {
  std::vector<std::optional<int>> out;
  out.reserve(uuids.size());
  for (const std::string& uuid : uuids) {
    std::optional<int> percent;
    for (const usage::GpuUsage& sample : samples) {
      if (sample.uuid == uuid) percent = sample.utilization_percent;
    }
    out.push_back(percent);
  }
  return out;
}

}  // namespace

IdleMonitor::IdleMonitor(Actions* actions, Options options, Clock clock)
    : actions_(actions),
      options_(options),
      clock_(std::move(clock)),
      tracker_(options.stale_after) {}

IdleMonitor::~IdleMonitor() { Stop(); }

void IdleMonitor::Observe(const usage::UsageAccounting::Report& report) {
  if (report.holders.empty()) return;  // Nobody's GPUs to judge.
  // Each holder's GPUs on this node (a handful: no more than the node has).
  struct Held {
    const usage::GpuHolder* holder = nullptr;
    std::vector<std::string> uuids;
  };
  absl::flat_hash_map<absl::string_view, Held> held;
  for (const auto& [uuid, holder] : report.holders) {
    Held& h = held[holder.workspace];
    h.holder = &holder;
    h.uuids.push_back(uuid);
  }
  std::shared_ptr<const core::Catalog> catalog = CatalogNow();
  absl::MutexLock lock(&mu_);
  for (const auto& [workspace_id, h] : held) {
    const std::string& workspace = h.holder->workspace;
    Watched& watched = watched_[workspace];
    if (h.holder->version > watched.version) {
      // A newer record than the one judged so far (a restart, or another
      // replica's write): its clock starts again.
      if (watched.version != 0) tracker_.Forget(workspace);
      watched.version = h.holder->version;
    }
    watched.pool = report.pool;
    watched.class_id = h.holder->class_id;
    watched.gpus = static_cast<int>(h.uuids.size());
    watched.last_seen = report.at;
    const core::WorkspaceClass* cls = catalog->FindClass(h.holder->class_id);
    if (cls == nullptr || !cls->idle) {
      tracker_.Forget(workspace);  // No policy (any more): never idle.
      watched.not_idle_seen = true;
      continue;
    }
    tracker_.Observe(workspace, *cls->idle, UtilizationOf(h.uuids, report.samples), report.at);
    if (tracker_.At(workspace, report.at).phase == Phase::kActive) watched.not_idle_seen = true;
  }
}

std::shared_ptr<const core::Catalog> IdleMonitor::CatalogNow() {
  {
    absl::MutexLock lock(&mu_);
    if (catalog_ != nullptr) return catalog_;
  }
  // Only before the first tick: afterwards the tick keeps it fresh.
  std::shared_ptr<const core::Catalog> catalog = actions_->Catalog();
  absl::MutexLock lock(&mu_);
  if (catalog_ == nullptr) catalog_ = catalog;
  return catalog_;
}

void IdleMonitor::Tick() {
  const absl::Time now = clock_();
  // Read here, once a tick, so a heartbeat never asks the scheduler for it:
  // a class's policy changes for the monitor at most a tick late.
  std::shared_ptr<const core::Catalog> catalog = actions_->Catalog();
  std::vector<Plan> plans;
  std::vector<std::string> ids;
  {
    absl::MutexLock lock(&mu_);
    catalog_ = std::move(catalog);
    // Heard from no longer: its agent went quiet or reports elsewhere now,
    // and the replica that hears it judges it.
    std::vector<std::string> stale;
    for (const auto& [id, watched] : watched_) {
      if (now - watched.last_seen > options_.stale_after) stale.push_back(id);
    }
    for (const std::string& id : stale) {
      watched_.erase(id);
      tracker_.Forget(id);
    }
    idle_gpus_.clear();
    for (auto& [id, watched] : watched_) {
      Plan plan{id, watched.version};
      const core::IdleTracker::Verdict verdict = tracker_.At(id, now);
      if (tracker_.PolicyOf(id) != nullptr) idle_gpus_[{watched.pool, watched.class_id}] += 0;
      if (verdict.phase == Phase::kIdle || verdict.phase == Phase::kStopDue) {
        plan.mark = core::IdleMark{Micros(verdict.idle_since), Micros(verdict.stops_at)};
        plan.stop = verdict.phase == Phase::kStopDue;
        idle_gpus_[{watched.pool, watched.class_id}] += watched.gpus;
      }
      plan.not_idle_seen = std::exchange(watched.not_idle_seen, false);
      // Only a change needs the mirror: most workspaces are busy and unmarked.
      plans.push_back(std::move(plan));
      ids.push_back(id);
    }
  }
  if (plans.empty()) return;
  const absl::flat_hash_map<std::string, Actions::Known> known = actions_->KnownOf(ids);
  for (const Plan& plan : plans) {
    auto it = known.find(plan.workspace);
    if (it != known.end()) Carry(plan, it->second);
  }
}

void IdleMonitor::Carry(const Plan& plan, const Actions::Known& known) {
  // The mirror and the monitor speak of different records (this replica's
  // own write not mirrored yet, or a newer one not heard of in a
  // heartbeat yet): the next tick sees them agree.
  if (known.version != plan.version) return;
  if (plan.mark) {
    if (known.mark != plan.mark) {
      // The watchers hear of it first; a stop follows on a later tick, once
      // the warning is on the record.
      absl::StatusOr<int64_t> written = actions_->Mark(plan.workspace, plan.version, plan.mark);
      if (!written.ok()) return;  // Moved on meanwhile: judged again next tick.
      NoteWritten(plan.workspace, *written);
      log::Info("workspace idle: watchers told",
                {{"workspace", plan.workspace},
                 {"idle_since", TimeText(plan.mark->since)},
                 {"stops_at", plan.mark->stops_at ? TimeText(*plan.mark->stops_at) : "never"}});
      return;
    }
    if (!plan.stop) return;
    absl::Status stopped = actions_->StopIdle(plan.workspace, plan.version);
    if (!stopped.ok()) {
      if (!absl::IsAborted(stopped)) {
        log::Warning("idle workspace not stopped",
                     {{"workspace", plan.workspace}, {"error", std::string(stopped.message())}});
      }
      return;
    }
    {
      // Counted before the log line, which tells that it is.
      absl::MutexLock lock(&mu_);
      auto watched = watched_.find(plan.workspace);
      if (watched != watched_.end()) {
        const usage::PoolClass key{watched->second.pool, watched->second.class_id};
        stops_[key]++;
        int& idle = idle_gpus_[key];
        idle = std::max(0, idle - watched->second.gpus);  // Not idle: gone.
        tracker_.Forget(plan.workspace);
        watched_.erase(watched);
      }
    }
    log::Info("workspace stopped: GPUs idle",
              {{"workspace", plan.workspace}, {"idle_since", TimeText(plan.mark->since)}});
    return;
  }
  // Not idle: a mark goes only on evidence (a sample in use or unreported,
  // or no policy), never because this replica's clock started late.
  if (!known.mark || !plan.not_idle_seen) return;
  absl::StatusOr<int64_t> cleared = actions_->Mark(plan.workspace, plan.version, std::nullopt);
  if (!cleared.ok()) return;
  NoteWritten(plan.workspace, *cleared);
  log::Info("workspace no longer idle: a GPU is in use", {{"workspace", plan.workspace}});
}

void IdleMonitor::NoteWritten(const std::string& workspace, int64_t version) {
  absl::MutexLock lock(&mu_);
  auto it = watched_.find(workspace);
  if (it != watched_.end() && version > it->second.version) it->second.version = version;
}

std::map<usage::PoolClass, int> IdleMonitor::IdleGpus() const {
  absl::MutexLock lock(&mu_);
  return idle_gpus_;
}

std::map<usage::PoolClass, int64_t> IdleMonitor::IdleStops() const {
  absl::MutexLock lock(&mu_);
  return stops_;
}

void IdleMonitor::Start() {
  loop_ = std::thread([this] { Loop(); });
}

void IdleMonitor::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (loop_.joinable()) loop_.join();
}

void IdleMonitor::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.tick)) return;
    }
    Tick();
  }
}

}  // namespace wsched::idle
