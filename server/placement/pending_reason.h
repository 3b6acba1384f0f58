// Why a pending workspace waits: one structured answer, from the layer
// nearest to placing it outward.
//
//   spending limit -> org GPU quota -> class policy -> no pool
//                                            (the workspace's own limits)
//   queued behind others                     (room exists now)
//   free GPUs only in IOMMU-unsafe groups    (room exists, not for a VM)
//   free GPUs not bound as needed            (room exists, wrong driver)
//   free GPUs unhealthy                      (room exists, broken)
//   a MIG GPU being laid out anew for it     (a slice is coming)
//   a node's driver installing / failed      (a node exists, not ready)
//   a node provisioning                      (a node is coming)
//   pool backing off -> scale-up requested ->
//   pool at max_size -> scale-up not yet     (a node must be asked for)
//
// The first layer that holds the workspace back is named, for the pool
// closest to holding it: capacity on its way (an install, a boot, a
// requested scale-up) beats a dead end (max_size, broken or unsafe GPUs, a
// failed install); earlier pools win ties. Nearest first, because
// that is the truthful answer: a workspace that will land on a node whose
// driver is installing waits for that install, even if its pool is also at
// max_size. "Scale-up requested" is said only when the scaler's current
// signal asks for more nodes than the pool has.
//
// Queue-aware, and this file is the only place a reason is made: the
// workspaces ahead in the queue are explained first, and each is handed the
// capacity its reason names (a free node, unhealthy or unsafe GPUs, a node
// installing its driver or booting, a node the scaler asked for, room below
// max_size) on a copy of the free counts. A later workspace is told what is
// left for *it*: behind 3 two-GPU workspaces waiting on a node's 7
// unhealthy GPUs, the 4th is told the pool is at max_size.
//
// Pure: the caller passes the snapshot, the scaler's view of each pool and
// the clock's `now`; no I/O, no locks. O(queue + nodes of the class's pools)
// per class in the queue: each class's walk over a pool's nodes only moves
// forward, since handing out capacity only ever shrinks it.
#ifndef WSCHED_SERVER_PLACEMENT_PENDING_REASON_H_
#define WSCHED_SERVER_PLACEMENT_PENDING_REASON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/core/driver_policy.h"
#include "server/core/pool.h"
#include "server/core/spending_limit.h"
#include "server/core/workspace_class.h"
#include "server/placement/relayout_plan.h"
#include "server/placement/snapshot.h"

namespace wsched::placement {

// Ordered nearest first; the order is the walk's (see above), except for
// codes added later, which go last to keep their API numbers (see Nearness
// in pending_reason.cc for where each sits).
enum class PendingCode {
  kOrgGpuQuota,
  kClassPolicy,
  // No pool of the catalog can hold the class any more (the catalog changed
  // after it was queued; a new request for it is refused instead).
  kNoPool,
  kQueued,
  kIommuUnsafe,
  kGpusUnhealthy,
  kDriverInstalling,
  kDriverInstallFailed,
  kNodeProvisioning,
  kPoolBackingOff,
  kPoolAtMaxSize,
  kScaleUpRequested,
  kScaleUpNotYetRequested,
  // Free GPUs that would hold it are not bound as the class needs: for a
  // VM, a member of the group is not on vfio-pci; for a container, the GPU
  // is on vfio-pci (core/vfio_binding.h). Sits between kIommuUnsafe and
  // kGpusUnhealthy.
  kGpusNotBound,
  // A node has the GPUs free, but no set of them whose every two share
  // NVLink, which the class requires (gpu.links: nvlink_required). Sits
  // between kQueued and kIommuUnsafe.
  kGpusNotLinked,
  // A GPU of a by_demand pool is being laid out anew with a slice of its
  // profile (relayout_plan.h); nearest after kQueued, since it takes
  // seconds.
  kMigRelayout,
  // A spending limit of the org or the project has no room left for the
  // workspace's first interval (docs/billing.md "Spending limits"). Judged
  // first, before the org's GPU quota: the commit refuses it at any node.
  kBudgetExhausted,
};

// "org_gpu_quota", "queued", ... (stable: API enum and metrics labels).
const char* PendingCodeName(PendingCode code);

// What the scaler says of one pool, from its latest published signal.
struct PoolScalingView {
  bool has_signal = false;
  int current_size = 0;
  int target_size = 0;
  std::optional<absl::Time> backoff_until;
  std::string backoff_detail;
  // When the scaler last asked for more nodes than the pool had.
  std::optional<absl::Time> scale_up_since;
  // Measured provision-to-ready time (median) and the sample count.
  std::optional<absl::Duration> median_start;
  int start_samples = 0;
};

struct QuotaFigures {
  int64_t held_sevenths = 0;  // What the org holds, in sevenths of a GPU (a slice: its share).
  int64_t quota = 0;          // Its quota in GPUs (>= 0).
  friend bool operator==(const QuotaFigures&, const QuotaFigures&) = default;
};

struct PendingContext {
  const core::WorkspaceClass* cls = nullptr;
  const std::vector<core::NodePool>* pools = nullptr;
  const Snapshot* snapshot = nullptr;
  const std::vector<core::DriverPolicyEntry>* driver_policy = nullptr;
  // By pool id; absent = no signal yet.
  std::map<std::string, PoolScalingView> scaling;
  // 1-based position in the queue (0: not queued).
  int queue_position = 0;
  // Classes of the workspaces ahead of this one, in service order: they are
  // handed capacity first. A null entry (class gone) takes nothing.
  std::vector<const core::WorkspaceClass*> ahead;
  // Set when the org has a GPU quota.
  std::optional<QuotaFigures> quota;
  // The spending limits over the workspace: its org's, then its project's.
  std::vector<core::BudgetStanding> budgets;
  // Set when project or org policy no longer allows the class.
  std::optional<std::string> policy_denial;
  // The MIG re-layouts under way (relayout_plan.h): their slices are coming
  // and are handed out in queue order like free ones. Their GPUs are marked
  // in the snapshot, so what they have now is not counted as free.
  std::vector<RelayoutOrder> relayouts;
  absl::Time now;
};

struct PendingReason {
  PendingCode code = PendingCode::kScaleUpNotYetRequested;
  // One line for people: "pool gpu-h100 is at max_size 1 (1 node)".
  std::string detail;
  std::string pool;
  std::string node;
  std::string kernel;
  std::string image;
  QuotaFigures quota;
  int gpus_needed = 0;
  int queue_position = 0;
  // Since when the holding layer holds (install, provisioning, scale-up).
  std::optional<absl::Time> since;
  // Until when (backoff; the period's end for kBudgetExhausted).
  std::optional<absl::Time> until;

  friend bool operator==(const PendingReason&, const PendingReason&) = default;
};

// The first of `ctx.budgets` that does not admit `ctx.cls`'s first interval
// (core::AdmitsWithinBudget); null when every one does or the class holds
// no GPU.
const core::BudgetStanding* ExhaustedBudget(const PendingContext& ctx);

// The pools the walk for `ctx.cls` looks at, and so a change may help
// through: those of the class, in its preference order, then those of the
// classes ahead, which a change there may draw away from the class's pools
// (a larger h100 pool takes the workspaces ahead that would otherwise fill
// the a100 pool this one needs). Without repeats. Only their nodes are
// walked: the rest of the fleet cannot change the answer.
std::vector<const core::NodePool*> PoolsThatMatter(const PendingContext& ctx);

// The walk above, after the workspaces in `ctx.ahead` took their share.
// `ctx.cls`, `pools`, `snapshot` and `driver_policy` must be set.
PendingReason ExplainPending(const PendingContext& ctx);

// The reason of every workspace of a queue, `classes` in service order
// (null: class gone, explained as NO_POOL and taking nothing), in one pass.
// `ctx.cls`, `ahead`, `queue_position`, `budgets`, `quota` and `policy_denial` are not
// read: the limits of each workspace are its caller's to judge
// (ExplainPending does, for one).
std::vector<PendingReason> ExplainQueue(const PendingContext& ctx,
                                        const std::vector<const core::WorkspaceClass*>& classes);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_PENDING_REASON_H_
