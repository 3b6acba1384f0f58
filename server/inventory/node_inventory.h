// The inventory of nodes as agents and admins change it: registration,
// heartbeats, admin states (cordon, drain, uncordon, remove), lost nodes,
// driver work and GPU health. It writes through the store and keeps no
// picture of the nodes of its own: it compares and lists against the
// replica's mirror (NodeInventory::Mirror, its reads), so a replica has one
// picture of each node. What it owns: the batching of heartbeats that
// change nothing (LivenessRecorder) and the measured start and install
// times (TimingStats); no lock of its own (those two have theirs).
//
// What must follow a write it asks of the parts that own it, which it is
// given, never of its owner: the feed follower catches up (a write's
// answer is read from the mirror after that, so the catch-up belongs to
// the operation, not after it), the drain requests take the pools where
// capacity came back, the GPU usage accounting takes the agents' samples,
// and the credential admin refreshes a changed credential.
#ifndef WSCHED_SERVER_INVENTORY_NODE_INVENTORY_H_
#define WSCHED_SERVER_INVENTORY_NODE_INVENTORY_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/core/driver_install.h"
#include "server/core/node.h"
#include "server/core/paging.h"
#include "server/metrics/metrics.h"
#include "server/replica/cluster_view.h"
#include "server/inventory/credential_admin.h"
#include "server/replica/drain_requests.h"
#include "server/replica/feed_follower.h"
#include "server/inventory/liveness_recorder.h"
#include "server/inventory/timing_stats.h"
#include "server/usage/usage_accounting.h"
#include "server/store/database.h"
#include "server/store/types.h"

namespace wsched::inventory {

// A node as listed to operators.
struct NodeView {
  store::StoredNode node;
  struct GpuView {
    bool passthrough_safe = false;
    std::string passthrough_unsafe_reason;
    // Why it is not handed out as its pool's gpu_binding needs
    // (core/vfio_binding.h); empty when bound as needed or not reported.
    std::string binding_problem;
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
  std::map<std::string, std::string> gpu_health_reason_by_uuid;  // For unhealthy ones.
  using Usage = usage::GpuUsage;
  std::vector<Usage> usage;
};

struct DriverWork {
  std::string node_name, kernel_version, os_id, os_version, driver_version, installer_image;
  std::string pool;
};

struct HeartbeatResult {
  core::NodeState state = core::NodeState::kReady;
  bool reregister = false;
  std::string pool;  // For the caller's scope check.
  // The install the node's agent runs itself (a `node` pool), if any.
  std::optional<DriverWork> driver_work;
};

// Re-evaluates the node's driver state and detail from the policy and its
// history, after any change of either.
void EvaluateDriverInto(const core::Catalog& catalog, store::StoredNode& node);

// NOT_FOUND (NODE_NOT_FOUND) naming the node.
absl::Status UnknownNodeError(const std::string& name);

// A bootstrap registration's new node credential (docs/security.md).
struct NewNodeCredential {
  std::string token_sha256;  // 32 raw bytes: the SHA-256 of the agent's token.
  std::string issued_by;     // The bootstrap principal.
};

// What an install job's start or end says (ReportDriverInstall).
struct DriverInstallReport {
  enum class Outcome { kStarted, kSucceeded, kFailed };
  std::string node;
  std::string kernel;  // Must be the node's running kernel.
  Outcome outcome = Outcome::kSucceeded;
  std::string detail;    // The installed driver, or why the job failed.
  std::string log_tail;  // The job's last log lines (a failure shows them).
  // The job's own run time when its runner measured it: the install time
  // the estimate learns (else since when the node needed its driver).
  std::optional<absl::Duration> took;
  core::DriverCache cache = core::DriverCache::kUnknown;
};

class NodeInventory {
 public:
  using Clock = std::function<absl::Time()>;

  // What the inventory reads of the replica's mirror.
  class Mirror {
   public:
    virtual ~Mirror() = default;
    virtual std::shared_ptr<const core::Catalog> CurrentCatalog() const = 0;
    virtual std::shared_ptr<const replica::ClusterView> View() const = 0;
    struct Node {
      std::shared_ptr<const store::StoredNode> stored;  // Null when not mirrored.
      // The node's held GPUs (by UUID): workspace, class and version.
      usage::GpuHolders holders;
      // Since when the node is in its state, as this replica saw it.
      std::optional<absl::Time> state_since;
      // Some workspace holds resources here (placed, or lost and not yet
      // released): a node a driver rollout released waits for it to end.
      bool holds_work = false;
    };
    virtual Node MirroredNode(const std::string& name) const = 0;
  };

  // The parts it reads and writes through. Without `db` (unit tests of the
  // placement path) only the reads and the liveness-only heartbeat work,
  // and nothing catches up or drains.
  struct Parts {
    store::Database* db = nullptr;
    const Mirror* mirror = nullptr;
    replica::FeedFollower* follower = nullptr;  // Read your writes.
    replica::DrainRequests* drains = nullptr;   // Pending work may fit now.
    usage::UsageAccounting* usage = nullptr;    // The agents' GPU samples.
    CredentialAdmin* credentials = nullptr;
    metrics::Metrics* metrics = nullptr;
  };

  struct Options {
    absl::Duration node_lost_after = absl::Seconds(60);
    absl::Duration gpu_healthy_for = absl::Minutes(10);
  };

  NodeInventory(Parts parts, Options options, Clock clock);

  // With `bootstrap`, only a node that does not exist yet is registered,
  // with that credential, in one transaction: PERMISSION_DENIED
  // (BOOTSTRAP_NODE_EXISTS) for a name that is taken, even by a concurrent
  // registration.
  absl::StatusOr<NodeView> RegisterNode(const core::NodeInfo& reported,
                                        const NewNodeCredential* bootstrap = nullptr);
  absl::StatusOr<HeartbeatResult> Heartbeat(const HeartbeatInput& input);
  // Cordon / drain / uncordon: to kCordoned, kDraining or kReady.
  // `expected_version` 0 is unconditional; otherwise ABORTED
  // (VERSION_MISMATCH) when the node's version differs, checked on the
  // locked row in the writing transaction.
  absl::StatusOr<NodeView> SetNodeAdminState(const std::string& name, core::NodeState state,
                                             int64_t expected_version = 0);
  absl::Status RemoveNode(const std::string& name);
  absl::StatusOr<NodeView> GetNode(const std::string& name);
  // Lists page in key order (core/paging.h).
  absl::StatusOr<core::Page<NodeView>> ListNodes(const std::string& pool,
                                                 const core::PageRequest& page);
  absl::StatusOr<std::vector<PoolView>> ListPools();
  struct DriverWorkPage {
    std::vector<DriverWork> work;
    std::vector<std::string> nodes_without_policy;
    std::string next_page_token;
  };
  // Pages over the GPU nodes that need driver work or have no policy.
  absl::StatusOr<DriverWorkPage> ListDriverWork(const core::PageRequest& page);
  // Records a job's start (the node is installing) or end (verified for
  // the kernel, or failed with the detail and log tail); FAILED_PRECONDITION
  // (STALE_KERNEL_REPORT) for a kernel the node no longer runs.
  absl::StatusOr<NodeView> ReportDriverInstall(const DriverInstallReport& report);
  // The install job `node`'s agent runs itself, when its pool's
  // driver_install is `node` and it lacks its driver (core/driver_install.h).
  std::optional<DriverWork> AgentDriverWork(const store::StoredNode& node) const;
  // Whether a node of a pool whose driver_install is `face` needs its
  // driver or failed its install, from the mirror (no database read): the
  // cluster face lists the work from the store only then.
  bool AnyNodeNeedsDriverIn(core::DriverInstall face) const;

  // Admin: returns the node's GPU `uuid` to service now.
  absl::StatusOr<NodeView> ClearGpuHealth(const std::string& node, const std::string& uuid);
  // The health of the node's GPUs as this replica knows it, by UUID (for
  // showing it on the workspaces that hold them).
  struct GpuHealthNow {
    bool healthy = true;
    std::string reason;
  };
  absl::flat_hash_map<std::string, GpuHealthNow> GpuHealthOn(const std::string& node) const;
  // Marks nodes without recent heartbeats lost (also run by a loop).
  absl::Status DetectLostNodes();

  // Every node, unpaged, with its workspace count: for pool counts,
  // driver work and rollouts.
  absl::StatusOr<std::vector<NodeView>> AllNodes();

  // The catalog the inventory judges drivers with (the mirror's).
  std::shared_ptr<const core::Catalog> Catalog() const { return parts_.mirror->CurrentCatalog(); }
  // The measured start and install times (empty without a database).
  store::TimingFigures Timings() { return timing_ ? timing_->Get() : store::TimingFigures(); }
  // A sample was recorded elsewhere (a first ready): read them anew.
  void ForgetTimings() {
    if (timing_) timing_->Invalidate();
  }
  LivenessRecorder& liveness() { return liveness_; }

  // The node as listed: holders from `cluster`.
  static NodeView ViewOf(const store::StoredNode& node, const replica::ClusterView& cluster);
  // The node as committed, from its row alone (WatchNodes): each GPU's
  // passthrough safety, but no holders, binding problems nor workspace
  // count, which move with placements and the catalog, not its version.
  static NodeView CommittedViewOf(const store::StoredNode &node);

private:
  NodeView ViewOf(const store::StoredNode& node) const;
  std::vector<NodeView> ViewsOf(const std::vector<store::StoredNode>& nodes,
                                const std::map<std::string, int>& workspaces);
  // Read your writes: the follower catches up (FAILED_PRECONDITION without one).
  absl::Status CatchUp();
  // Pending work may fit now: all of it, or what may use `pool`.
  void DrainEverything();
  void DrainPool(const std::string& pool);
  // The heartbeat's liveness-only path; false when the node row must change.
  bool TryLivenessOnly(const HeartbeatInput& input, HeartbeatResult& result);
  absl::StatusOr<HeartbeatResult> WriteHeartbeat(const HeartbeatInput& input);

  const Parts parts_;
  const Options options_;
  const Clock clock_;
  LivenessRecorder liveness_;
  std::unique_ptr<TimingStats> timing_;  // Absent without a database.
};

}  // namespace wsched::inventory

#endif  // WSCHED_SERVER_INVENTORY_NODE_INVENTORY_H_
