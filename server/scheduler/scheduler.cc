// Start-up, the background loop, refresh from the database, and watches.
#include "server/scheduler/scheduler.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/placement/resources.h"
#include "server/store/catalog_repository.h"
#include "server/store/change_feed.h"
#include "server/store/workspace_repository.h"

namespace wsched::scheduler {
namespace {

// What a placed workspace holds besides GPUs: CPU and memory as stored, the
// rest from its class (the store keeps only what it guards).
placement::Resources HeldResources(const core::Workspace& w, const core::Catalog& catalog) {
  placement::Resources held;
  if (const core::WorkspaceClass* cls = catalog.FindClass(w.class_id)) held = placement::RequestOf(*cls);
  held.cpu_millis = w.cpu_millis;
  held.memory_bytes = w.memory_bytes;
  return held;
}

}  // namespace

Scheduler::Scheduler(store::Database* db, metrics::Metrics* metrics, SchedulerOptions options)
    : db_(db),
      metrics_(metrics),
      options_(options),
      batcher_(db, options.commit_writers, options.max_commit_batch) {}

Scheduler::~Scheduler() { Stop(); }

absl::Status Scheduler::Start() {
  // Listen first, then read: a change committed in between is not missed,
  // and the first read needs no second one.
  listener_ = std::make_unique<store::ChangeListener>(db_->url(), [this] { refresh_requested_ = true; });
  if (!listener_->WaitUntilListening(absl::Seconds(5))) refresh_requested_ = true;
  if (absl::Status loaded = LoadAll(); !loaded.ok()) return loaded;
  loop_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void Scheduler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (loop_.joinable()) loop_.join();
  listener_.reset();
}

bool Scheduler::stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

absl::Status Scheduler::LoadAll() {
  // A change this replica mirrors while we read is newer than the read:
  // read again rather than install the older picture over it.
  for (int attempt = 0;; ++attempt) {
    uint64_t changes_before;
    {
      absl::MutexLock lock(&mu_);
      changes_before = local_changes_;
    }
    absl::Status loaded = LoadAllOnce(changes_before, attempt >= 8);
    if (!absl::IsAborted(loaded)) return loaded;
  }
}

absl::Status Scheduler::LoadAllOnce(uint64_t changes_before, bool last_attempt) {
  core::Catalog catalog;
  std::vector<store::StoredNode> nodes;
  std::vector<core::Workspace> active;
  absl::Status status = db_->InTransaction("loading cluster state", [&](pqxx::work& txn) -> absl::Status {
    auto loaded_catalog = store::LoadCatalog(txn);
    if (!loaded_catalog.ok()) return loaded_catalog.status();
    catalog = std::move(*loaded_catalog);
    auto loaded_nodes = store::LoadNodes(txn);
    if (!loaded_nodes.ok()) return loaded_nodes.status();
    nodes = std::move(*loaded_nodes);
    auto loaded_workspaces = store::LoadWorkspacesInState(
        txn, {core::WorkspaceState::kPlaced, core::WorkspaceState::kLost,
              core::WorkspaceState::kPending});
    if (!loaded_workspaces.ok()) return loaded_workspaces.status();
    active = std::move(*loaded_workspaces);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;

  placement::Snapshot snapshot;
  placement::PendingQueue pending;
  absl::flat_hash_map<std::string, std::string> class_of;
  for (const auto& node : nodes) {
    (void)snapshot.UpsertNode(node.info, node.state, node.driver_state);
  }
  for (const auto& w : active) {
    class_of[w.id] = w.class_id;
    if (w.state == core::WorkspaceState::kPending) {
      const core::WorkspaceClass* cls = catalog.FindClass(w.class_id);
      std::vector<std::string> pools;
      if (cls != nullptr) {
        for (const auto& pool : catalog.pools) {
          if (pool.Matches(cls->pool_selector)) pools.push_back(pool.id);
        }
      }
      pending.Upsert({w.id, w.org_id, w.class_id, w.priority, w.created_at, w.pending_reason, pools});
    } else if (!w.node_name.empty()) {
      absl::Status held = snapshot.Hold(w.id, w.node_name, w.gpu_indices, HeldResources(w, catalog));
      if (!held.ok()) {
        log::Warning("stored hold does not fit the snapshot",
                     {{"workspace", w.id}, {"error", std::string(held.message())}});
      }
    }
  }
  absl::MutexLock lock(&mu_);
  if (local_changes_ != changes_before && !last_attempt) {
    return absl::AbortedError("changed while reading");
  }
  snapshot_ = std::move(snapshot);
  catalog_ = std::move(catalog);
  pending_ = std::move(pending);
  class_of_workspace_ = std::move(class_of);
  return absl::OkStatus();
}

absl::Status Scheduler::ReloadCatalog() {
  core::Catalog catalog;
  absl::Status status = db_->InTransaction("loading catalog", [&](pqxx::work& txn) -> absl::Status {
    auto loaded = store::LoadCatalog(txn);
    if (!loaded.ok()) return loaded.status();
    catalog = std::move(*loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  {
    absl::MutexLock lock(&mu_);
    catalog_ = std::move(catalog);
  }
  KickDrain();  // New pools or classes may let pending work fit.
  return absl::OkStatus();
}

core::Catalog Scheduler::catalog() const {
  absl::MutexLock lock(&mu_);
  return catalog_;
}

void Scheduler::KickDrain() {
  absl::MutexLock lock(&mu_);
  drain_requested_ = true;
}

void Scheduler::Loop() {
  absl::Time next_lost_check = absl::Now();
  absl::Time next_drain = absl::Now();
  const absl::Duration lost_period =
      std::max(absl::Milliseconds(200), options_.node_lost_after / 4);
  while (true) {
    bool drain = false;
    {
      absl::MutexLock lock(&mu_);
      auto wake = [this] { return stopping_ || drain_requested_; };
      mu_.AwaitWithTimeout(absl::Condition(&wake), absl::Milliseconds(100));
      if (stopping_) return;
      drain = drain_requested_;
      drain_requested_ = false;
    }
    absl::Time now = absl::Now();
    if (refresh_requested_.exchange(false)) {
      if (absl::Status s = LoadAll(); !s.ok()) {
        log::Warning("refresh from the database failed", {{"error", std::string(s.message())}});
        refresh_requested_ = true;
      }
      drain = true;
    }
    if (now >= next_lost_check) {
      next_lost_check = now + lost_period;
      if (absl::Status s = DetectLostNodes(); !s.ok()) {
        log::Warning("lost-node check failed", {{"error", std::string(s.message())}});
      }
    }
    if (drain || now >= next_drain) {
      next_drain = now + options_.refresh_interval;
      DrainPending();
    }
  }
}

void Scheduler::BumpVersion(const std::string& workspace_id) {
  ++local_changes_;
  versions_[workspace_id] = next_version_++;
}

void Scheduler::MirrorNode(const store::StoredNode& node) {
  ++local_changes_;
  (void)snapshot_.UpsertNode(node.info, node.state, node.driver_state);
}

int64_t Scheduler::WaitForChange(const std::string& workspace_id, int64_t after,
                                 absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (stopping_) return true;
    auto it = versions_.find(workspace_id);
    return it != versions_.end() && it->second > after;
  };
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
  auto it = versions_.find(workspace_id);
  return it == versions_.end() ? 0 : it->second;
}

std::vector<Scheduler::PendingDemand> Scheduler::Pending() const {
  absl::MutexLock lock(&mu_);
  std::vector<PendingDemand> out;
  for (const auto* entry : pending_.Ordered()) {
    out.push_back({entry->workspace, entry->class_id, entry->org, entry->pools, entry->since});
  }
  return out;
}

void Scheduler::WithSnapshot(
    const std::function<void(const placement::Snapshot&, const core::Catalog&)>& fn) const {
  absl::MutexLock lock(&mu_);
  fn(snapshot_, catalog_);
}

std::map<std::string, std::pair<double, double>> Scheduler::GpuSecondsByClass() const {
  absl::MutexLock lock(&mu_);
  return gpu_seconds_;
}

}  // namespace wsched::scheduler
