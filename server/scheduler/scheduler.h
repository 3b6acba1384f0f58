// The stateful heart of one replica: the in-memory snapshot the placement
// engine decides on, the catalog it decides with, the pending queue, and the
// watchers of workspace changes. PostgreSQL stays the arbiter: every change
// is committed first (or raced for, and retried) and mirrored here after.
//
// Methods are grouped by concern in separate files: inventory.cc (nodes),
// placing.cc (place, stop, pending), scheduler.cc (start-up, refresh,
// background loops, watch).
#ifndef WSCHED_SERVER_SCHEDULER_SCHEDULER_H_
#define WSCHED_SERVER_SCHEDULER_SCHEDULER_H_

#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/core/class_resolution.h"
#include "server/core/node.h"
#include "server/core/workspace.h"
#include "server/metrics/metrics.h"
#include "server/placement/pending_queue.h"
#include "server/placement/snapshot.h"
#include "server/store/change_feed.h"
#include "server/store/commit_batcher.h"
#include "server/store/database.h"
#include "server/store/node_repository.h"

namespace wsched::scheduler {

struct SchedulerOptions {
  absl::Duration heartbeat_interval = absl::Seconds(10);  // Told to agents.
  absl::Duration node_lost_after = absl::Seconds(60);     // Missed heartbeats.
  absl::Duration refresh_interval = absl::Seconds(2);     // Re-read other replicas' changes.
  // One writer: batches never hold node rows at the same time, so they
  // cannot deadlock or wait on each other's locks; requests that arrive
  // during a commit form the next batch (docs/performance.md).
  int commit_writers = 1;
  int max_commit_batch = 64;
  int place_attempts = 10;  // Decide + commit rounds before giving up on races.
};

// A node as listed to operators.
struct NodeView {
  store::StoredNode node;
  struct GpuView {
    bool passthrough_safe = false;
    std::string passthrough_unsafe_reason;
    std::string held_by;  // Workspace id; empty when free.
  };
  std::vector<GpuView> gpus;  // Parallel to node.info.gpus.
  int workspace_count = 0;
};

struct PoolView {
  core::NodePool pool;
  std::map<std::string, int> nodes_by_state;
  int gpus_total = 0;
  int gpus_held = 0;
  int gpus_unhealthy = 0;
};

struct HeartbeatInput {
  std::string node_name;
  std::string kernel_version;  // Empty: unchanged.
  std::string driver_version;
  std::map<std::string, bool> gpu_healthy_by_uuid;
  struct Usage {
    std::string uuid;
    int utilization_percent = 0;
    int64_t memory_used_bytes = 0;
  };
  std::vector<Usage> usage;
};

struct HeartbeatResult {
  core::NodeState state = core::NodeState::kReady;
  bool reregister = false;
  std::string pool;  // For the caller's scope check.
};

struct DriverWork {
  std::string node_name, kernel_version, os_id, os_version, driver_version, installer_image;
};

struct PlaceRequest {
  std::string workspace_id, org_id, project_id, user_id, class_id;
  bool restart = false;
  int priority = 0;
};

// A workspace with what the answer adds while it waits.
struct WorkspaceView {
  core::Workspace workspace;
  int queue_position = 0;  // 1-based; 0 when not pending.
  std::optional<absl::Duration> estimated_wait;
  int64_t version = 0;  // Bumped on every change seen by this replica.
};

class Scheduler {
 public:
  Scheduler(store::Database* db, metrics::Metrics* metrics, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Loads catalog, nodes, holds and pending work from the database and
  // starts the background loops (lost nodes, refresh, pending drain).
  absl::Status Start();
  // Stops the loops and wakes every watcher.
  void Stop();

  // ---- catalog (scheduler.cc) ----
  // Re-reads the catalog (after an apply on this replica, or on a timer).
  absl::Status ReloadCatalog();
  core::Catalog catalog() const;

  // ---- inventory (inventory.cc) ----
  absl::StatusOr<NodeView> RegisterNode(const core::NodeInfo& reported);
  absl::StatusOr<HeartbeatResult> Heartbeat(const HeartbeatInput& input);
  // Cordon / drain / uncordon: to kCordoned, kDraining or kReady.
  absl::StatusOr<NodeView> SetNodeAdminState(const std::string& name, core::NodeState state);
  absl::Status RemoveNode(const std::string& name);
  absl::StatusOr<NodeView> GetNode(const std::string& name);
  absl::StatusOr<std::vector<NodeView>> ListNodes(const std::string& pool);
  absl::StatusOr<std::vector<PoolView>> ListPools();
  absl::StatusOr<std::pair<std::vector<DriverWork>, std::vector<std::string>>> ListDriverWork();
  absl::StatusOr<NodeView> ReportDriverInstall(const std::string& node, const std::string& kernel,
                                               bool success, const std::string& detail);
  // Marks nodes without recent heartbeats lost (also run by a loop).
  absl::Status DetectLostNodes();

  // ---- placement (placing.cc) ----
  absl::StatusOr<WorkspaceView> Place(const PlaceRequest& request);
  absl::StatusOr<WorkspaceView> StopWorkspace(const std::string& id);
  absl::StatusOr<WorkspaceView> GetWorkspace(const std::string& id);
  absl::StatusOr<std::vector<WorkspaceView>> ListWorkspaces(const std::string& node,
                                                           const std::string& pool,
                                                           const std::string& state);
  // Tries to place pending work on the snapshot's free capacity now.
  void DrainPending();

  // ---- watch (scheduler.cc) ----
  // Blocks until the workspace's version exceeds `after`, the deadline
  // passes or the scheduler stops; returns the current version.
  int64_t WaitForChange(const std::string& workspace_id, int64_t after, absl::Time deadline);
  bool stopping() const;

  // ---- read-only views for metrics and scaling ----
  struct PendingDemand {
    std::string workspace, class_id, org;
    std::vector<std::string> pools;
    absl::Time since;
  };
  std::vector<PendingDemand> Pending() const;
  // Calls fn(snapshot) under the lock; fn must not block.
  void WithSnapshot(const std::function<void(const placement::Snapshot&,
                                             const core::Catalog&)>& fn) const;
  struct GpuUsageSample {
    std::string node, pool, uuid, pci_address, model, workspace, class_id;
    int index = 0;
    int utilization_percent = 0;
    int64_t memory_used_bytes = 0;
  };
  std::vector<GpuUsageSample> GpuUsage() const;
  // Seconds GPUs were held and busy, by class, since start.
  std::map<std::string, std::pair<double, double>> GpuSecondsByClass() const;
  store::CommitBatcher::Stats commit_stats() const { return batcher_.stats(); }
  // How long pending work on a pool may wait ("time to GPU"); set once by
  // the scaling controller before serving.
  void SetDelayEstimator(std::function<std::optional<absl::Duration>(const std::string& pool)> fn) {
    delay_estimator_ = std::move(fn);
  }

 private:
  // scheduler.cc
  absl::Status LoadAll();
  // One read; ABORTED when local changes happened meanwhile (unless last).
  absl::Status LoadAllOnce(uint64_t changes_before, bool last_attempt);
  void Loop();
  void BumpVersion(const std::string& workspace_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every change of the snapshot goes through these (or MirrorNode), so
  // LoadAll can tell that a read it is about to install went stale.
  absl::Status HoldInSnapshot(absl::string_view workspace, absl::string_view node,
                              std::vector<int> gpu_indices, const placement::Resources& resources)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++local_changes_;
    return snapshot_.Hold(workspace, node, std::move(gpu_indices), resources);
  }
  void ReleaseInSnapshot(absl::string_view workspace) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++local_changes_;
    snapshot_.Release(workspace);
  }
  // Mirrors a stored node into the snapshot.
  void MirrorNode(const store::StoredNode& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void KickDrain();

  // inventory.cc
  NodeView ViewOf(const store::StoredNode& node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AccountGpuSeconds(const std::string& node, const std::vector<HeartbeatInput::Usage>& usage)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // placing.cc
  absl::StatusOr<WorkspaceView> ViewOfStored(const core::Workspace& workspace);
  absl::Status TryPlacePending(const std::string& workspace_id);

  store::Database* const db_;
  metrics::Metrics* const metrics_;
  const SchedulerOptions options_;
  store::CommitBatcher batcher_;

  mutable absl::Mutex mu_;
  placement::Snapshot snapshot_ ABSL_GUARDED_BY(mu_);
  core::Catalog catalog_ ABSL_GUARDED_BY(mu_);
  placement::PendingQueue pending_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> versions_ ABSL_GUARDED_BY(mu_);
  int64_t next_version_ ABSL_GUARDED_BY(mu_) = 1;
  // Changes mirrored into the snapshot by this replica (see LoadAll).
  uint64_t local_changes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::string> class_of_workspace_ ABSL_GUARDED_BY(mu_);
  struct NodeUsage {
    std::vector<HeartbeatInput::Usage> usage;
    absl::Time sampled_at;
  };
  absl::flat_hash_map<std::string, NodeUsage> usage_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::pair<double, double>> gpu_seconds_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool drain_requested_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex drain_mu_;  // One drain at a time.
  // Other replicas' commits: set by the change listener, consumed by Loop.
  std::atomic<bool> refresh_requested_{false};
  std::unique_ptr<store::ChangeListener> listener_;
  std::thread loop_;
  std::function<std::optional<absl::Duration>(const std::string&)> delay_estimator_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCHEDULER_H_
