// Placing and stopping workspaces; the pending queue and its drain.
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/log/log.h"
#include "server/placement/decide.h"
#include "server/scheduler/device_spec.h"
#include "server/scheduler/scheduler.h"
#include "server/store/settings_repository.h"
#include "server/store/workspace_repository.h"

namespace wsched::scheduler {
namespace {

bool IsActive(const core::Workspace& w) {
  return w.state == core::WorkspaceState::kPending || w.state == core::WorkspaceState::kPlaced;
}

std::string PendingReason(const placement::NotNow& not_now) {
  if (not_now.pools.empty()) return not_now.reason;
  return absl::StrCat(not_now.reason, "; scale-up requested for pool ",
                      absl::StrJoin(not_now.pools, ", "));
}

// Commits a placement, re-checking the org's GPU quota under a per-org lock
// so replicas cannot overshoot it together.
store::CommitBatcher::Job CommitJob(const core::Workspace& workspace, int gpus, int64_t quota) {
  return [workspace, gpus, quota](pqxx::work& txn) -> absl::Status {
    if (gpus > 0 && quota >= 0) {
      store::LockOrg(txn, workspace.org_id);
      int64_t held = store::OrgGpusHeld(txn, workspace.org_id);
      if (held + gpus > quota) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "org ", workspace.org_id, " holds ", held, " GPUs of its quota of ", quota,
            "; class ", workspace.class_id, " needs ", gpus, " more"));
      }
    }
    return store::CommitPlacement(txn, workspace);
  };
}

}  // namespace

absl::StatusOr<WorkspaceView> Scheduler::ViewOfStored(const core::Workspace& workspace) {
  WorkspaceView view;
  view.workspace = workspace;
  absl::MutexLock lock(&mu_);
  if (workspace.state == core::WorkspaceState::kPending) {
    view.queue_position = pending_.Position(workspace.id);
    if (const auto* entry = pending_.Find(workspace.id)) {
      view.workspace.pending_reason = entry->reason;
      if (delay_estimator_ && !entry->pools.empty()) {
        view.estimated_wait = delay_estimator_(entry->pools.front());
      }
    }
  }
  auto it = versions_.find(workspace.id);
  view.version = it == versions_.end() ? 0 : it->second;
  return view;
}

absl::StatusOr<WorkspaceView> Scheduler::Place(const PlaceRequest& request) {
  absl::Time start = absl::Now();
  std::string class_label = "unresolved";
  auto finish = [&](absl::StatusOr<WorkspaceView> result, absl::string_view outcome) {
    metrics_->ObservePlacement(class_label, result.ok() ? outcome : "error", absl::Now() - start);
    return result;
  };
  for (int attempt = 0; attempt < options_.place_attempts; ++attempt) {
    std::optional<core::Workspace> existing;
    core::ProjectSettings project;
    core::OrgSettings org;
    int64_t org_gpus = 0;
    absl::Status read = db_->InTransaction("reading placement inputs", [&](pqxx::work& txn) -> absl::Status {
      auto stored = store::LoadWorkspace(txn, request.workspace_id);
      if (!stored.ok()) return stored.status();
      existing = std::move(*stored);
      if (existing && IsActive(*existing)) return absl::OkStatus();
      auto p = store::LoadProjectSettings(txn, request.project_id);
      if (!p.ok()) return p.status();
      project = std::move(*p);
      auto o = store::LoadOrgSettings(txn, request.org_id);
      if (!o.ok()) return o.status();
      org = std::move(*o);
      if (org.gpu_quota >= 0) org_gpus = store::OrgGpusHeld(txn, request.org_id);
      return absl::OkStatus();
    });
    if (!read.ok()) return finish(read, "error");
    // Idempotent: the same id answers with the same placement (or queue slot).
    if (existing && IsActive(*existing)) {
      class_label = existing->class_id;
      return finish(ViewOfStored(*existing), "repeated");
    }

    core::Catalog catalog = this->catalog();
    std::string previous = request.restart && existing ? existing->class_id : "";
    auto resolution = core::ResolveClass(
        {request.org_id, request.project_id, request.class_id, previous}, catalog, project, org);
    if (!resolution.ok()) return finish(resolution.status(), "refused");
    const core::WorkspaceClass* cls = catalog.FindClass(resolution->class_id);
    class_label = cls->id;
    if (cls->is_gpu() && org.gpu_quota >= 0 && org_gpus + cls->gpu.count > org.gpu_quota) {
      return finish(absl::ResourceExhaustedError(absl::StrCat(
                        "org ", request.org_id, " holds ", org_gpus, " GPUs of its quota of ",
                        org.gpu_quota, "; class ", cls->id, " needs ", cls->gpu.count, " more")),
                    "refused");
    }

    core::Workspace w;
    w.id = request.workspace_id;
    w.org_id = request.org_id;
    w.project_id = request.project_id;
    w.user_id = request.user_id;
    w.class_id = cls->id;
    w.class_source = core::ClassSourceName(resolution->source);
    w.explanation = resolution->explanation;
    w.priority = request.priority;

    placement::Decision decision;
    core::NodeInfo node;
    core::NodePool pool;
    {
      absl::MutexLock lock(&mu_);
      decision = placement::Decide(*cls, catalog.pools, snapshot_);
      if (auto* placed = std::get_if<placement::Placed>(&decision)) {
        // Tentative hold: concurrent decisions on this replica see it.
        absl::Status held = HoldInSnapshot(w.id, placed->node, placed->gpu_indices, placed->resources);
        if (!held.ok()) {
          // The same id is being placed by a concurrent request: let it win.
          mu_.Unlock();
          absl::SleepFor(absl::Milliseconds(5));
          mu_.Lock();
          continue;
        }
        node = snapshot_.FindNode(placed->node)->info;
        pool = *catalog.FindPool(placed->pool);
      }
    }
    if (auto* never = std::get_if<placement::Never>(&decision)) {
      return finish(absl::FailedPreconditionError(absl::StrCat(
                        "class ", cls->id, " can never be placed: ", never->reason)),
                    "never");
    }
    if (auto* not_now = std::get_if<placement::NotNow>(&decision)) {
      w.state = core::WorkspaceState::kPending;
      w.pending_reason = PendingReason(*not_now);
      absl::Status saved = db_->InTransaction("queueing workspace", [&](pqxx::work& txn) {
        return store::SavePending(txn, w);
      });
      if (absl::IsAborted(saved)) continue;  // A concurrent request got there first.
      if (!saved.ok()) return finish(saved, "error");
      w.created_at = absl::Now();
      {
        absl::MutexLock lock(&mu_);
        pending_.Upsert({w.id, w.org_id, w.class_id, w.priority, w.created_at, w.pending_reason,
                         not_now->pools});
        class_of_workspace_[w.id] = w.class_id;
        BumpVersion(w.id);
      }
      log::Info("workspace pending", {{"workspace", w.id}, {"class", w.class_id},
                                      {"reason", w.pending_reason}});
      return finish(ViewOfStored(w), "pending");
    }

    const auto& placed = std::get<placement::Placed>(decision);
    auto built = BuildPlacement(*cls, node, pool, placed.gpu_indices);
    if (!built.ok()) {
      absl::MutexLock lock(&mu_);
      ReleaseInSnapshot(w.id);
      return finish(built.status(), "error");
    }
    w.state = core::WorkspaceState::kPlaced;
    w.node_name = placed.node;
    w.pool = placed.pool;
    w.cpu_millis = placed.resources.cpu_millis;
    w.memory_bytes = placed.resources.memory_bytes;
    w.gpu_indices = placed.gpu_indices;
    w.gpu_uuids = built->gpu_uuids;
    w.placement_json = built->placement_json;
    absl::Status committed = batcher_.Run(CommitJob(w, cls->gpu.count, org.gpu_quota));
    if (committed.ok()) {
      w.placed_at = w.created_at = absl::Now();
      {
        absl::MutexLock lock(&mu_);
        pending_.Remove(w.id);
        class_of_workspace_[w.id] = w.class_id;
        BumpVersion(w.id);
      }
      return finish(ViewOfStored(w), "placed");
    }
    {
      absl::MutexLock lock(&mu_);
      ReleaseInSnapshot(w.id);
    }
    if (!absl::IsAborted(committed)) return finish(committed, "error");
    // Lost a race (another replica, or a node that changed): refresh and
    // retry after a short random pause, so racing replicas spread out.
    log::Info("placement lost a race; refreshing",
              {{"workspace", w.id}, {"error", std::string(committed.message())}});
    if (absl::Status s = LoadAll(); !s.ok()) return finish(s, "error");
    absl::SleepFor(absl::Milliseconds(1 + absl::ToUnixNanos(absl::Now()) % (5 * (attempt + 1))));
  }
  return finish(absl::AbortedError(absl::StrCat("placing ", request.workspace_id,
                                                " kept losing races; retry the request")),
                "error");
}

absl::StatusOr<WorkspaceView> Scheduler::StopWorkspace(const std::string& id) {
  std::optional<core::Workspace> after;
  absl::Status status = db_->InTransaction("stopping workspace", [&](pqxx::work& txn) -> absl::Status {
    auto before = store::StopWorkspace(txn, id);
    if (!before.ok()) return before.status();
    auto stored = store::LoadWorkspace(txn, id);
    if (!stored.ok()) return stored.status();
    after = std::move(*stored);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  {
    absl::MutexLock lock(&mu_);
    ReleaseInSnapshot(id);
    pending_.Remove(id);
    BumpVersion(id);
    drain_requested_ = true;  // Freed capacity may place pending work.
  }
  return ViewOfStored(*after);
}

absl::StatusOr<WorkspaceView> Scheduler::GetWorkspace(const std::string& id) {
  std::optional<core::Workspace> stored;
  absl::Status status = db_->InTransaction("reading workspace", [&](pqxx::work& txn) -> absl::Status {
    auto loaded = store::LoadWorkspace(txn, id);
    if (!loaded.ok()) return loaded.status();
    stored = std::move(*loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (!stored) return absl::NotFoundError(absl::StrCat("workspace ", id, " does not exist"));
  return ViewOfStored(*stored);
}

absl::StatusOr<std::vector<WorkspaceView>> Scheduler::ListWorkspaces(const std::string& node,
                                                                    const std::string& pool,
                                                                    const std::string& state) {
  std::vector<core::Workspace> stored;
  absl::Status status = db_->InTransaction("listing workspaces", [&](pqxx::work& txn) -> absl::Status {
    auto loaded = store::ListWorkspaces(txn, node, pool, state);
    if (!loaded.ok()) return loaded.status();
    stored = std::move(*loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  std::vector<WorkspaceView> views;
  for (const auto& w : stored) {
    auto view = ViewOfStored(w);
    if (view.ok()) views.push_back(std::move(*view));
  }
  return views;
}

void Scheduler::DrainPending() {
  absl::MutexLock drain_lock(&drain_mu_);  // One drain at a time.
  std::vector<std::string> ids;
  {
    absl::MutexLock lock(&mu_);
    for (const auto* entry : pending_.Ordered()) ids.push_back(entry->workspace);
  }
  for (const auto& id : ids) {
    if (stopping()) return;
    absl::Status status = TryPlacePending(id);
    if (!status.ok() && !absl::IsUnavailable(status)) {
      log::Warning("pending workspace not placed", {{"workspace", id},
                                                   {"error", std::string(status.message())}});
    }
  }
}

absl::Status Scheduler::TryPlacePending(const std::string& id) {
  core::Catalog catalog = this->catalog();
  placement::Decision decision;
  core::NodeInfo node;
  core::NodePool pool;
  const core::WorkspaceClass* cls = nullptr;
  {
    absl::MutexLock lock(&mu_);
    const placement::PendingEntry* entry = pending_.Find(id);
    if (entry == nullptr) return absl::OkStatus();  // Placed or stopped meanwhile.
    cls = catalog.FindClass(entry->class_id);
    if (cls == nullptr) return absl::OkStatus();  // Class gone: stays pending, visible.
    decision = placement::Decide(*cls, catalog.pools, snapshot_);
    if (auto* not_now = std::get_if<placement::NotNow>(&decision)) {
      placement::PendingEntry updated = *entry;
      updated.reason = PendingReason(*not_now);
      updated.pools = not_now->pools;
      pending_.Upsert(std::move(updated));
      return absl::OkStatus();
    }
    auto* placed = std::get_if<placement::Placed>(&decision);
    if (placed == nullptr) return absl::OkStatus();  // Never: the catalog changed; stays visible.
    if (!HoldInSnapshot(id, placed->node, placed->gpu_indices, placed->resources).ok()) {
      return absl::OkStatus();
    }
    node = snapshot_.FindNode(placed->node)->info;
    pool = *catalog.FindPool(placed->pool);
  }
  const auto& placed = std::get<placement::Placed>(decision);
  auto release = [&] {
    absl::MutexLock lock(&mu_);
    ReleaseInSnapshot(id);
  };
  std::optional<core::Workspace> stored;
  int64_t quota = -1;
  absl::Status read = db_->InTransaction("reading pending workspace", [&](pqxx::work& txn) -> absl::Status {
    auto loaded = store::LoadWorkspace(txn, id);
    if (!loaded.ok()) return loaded.status();
    stored = std::move(*loaded);
    if (stored) {
      auto org = store::LoadOrgSettings(txn, stored->org_id);
      if (!org.ok()) return org.status();
      quota = org->gpu_quota;
    }
    return absl::OkStatus();
  });
  if (!read.ok() || !stored || stored->state != core::WorkspaceState::kPending) {
    release();
    absl::MutexLock lock(&mu_);
    if (read.ok()) pending_.Remove(id);  // No longer pending in the store.
    return read;
  }
  auto built = BuildPlacement(*cls, node, pool, placed.gpu_indices);
  if (!built.ok()) {
    release();
    return built.status();
  }
  core::Workspace w = *stored;
  w.state = core::WorkspaceState::kPlaced;
  w.node_name = placed.node;
  w.pool = placed.pool;
  w.cpu_millis = placed.resources.cpu_millis;
  w.memory_bytes = placed.resources.memory_bytes;
  w.gpu_indices = placed.gpu_indices;
  w.gpu_uuids = built->gpu_uuids;
  w.placement_json = built->placement_json;
  w.pending_reason.clear();
  absl::Status committed = batcher_.Run(CommitJob(w, cls->gpu.count, quota));
  absl::MutexLock lock(&mu_);
  if (!committed.ok()) {
    ReleaseInSnapshot(id);
    if (absl::IsResourceExhausted(committed)) {
      if (const placement::PendingEntry* entry = pending_.Find(id)) {
        placement::PendingEntry updated = *entry;
        updated.reason = std::string(committed.message());
        pending_.Upsert(std::move(updated));
      }
      return absl::OkStatus();
    }
    return committed;
  }
  pending_.Remove(id);
  BumpVersion(id);
  log::Info("pending workspace placed", {{"workspace", id}, {"node", placed.node}});
  metrics_->ObservePlacement(cls->id, "placed_from_queue", absl::ZeroDuration());
  return absl::OkStatus();
}

}  // namespace wsched::scheduler
