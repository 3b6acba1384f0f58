#include "server/placement/pending_reason.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/placement/filters.h"
#include "server/placement/resources.h"

namespace wsched::placement {
namespace {

std::string Gpus(int n) { return absl::StrCat(n, n == 1 ? " GPU" : " GPUs"); }

std::string Ago(absl::Time since, absl::Time now) {
  return absl::StrCat(absl::FormatDuration(absl::Trunc(now - since, absl::Seconds(1))), " ago");
}

std::string StartTimeText(const PoolScalingView& scaling) {
  if (!scaling.median_start) return "no measured start time yet";
  return absl::StrCat("nodes of the pool start in ",
                      absl::FormatDuration(absl::Trunc(*scaling.median_start, absl::Seconds(1))),
                      " (median of ", scaling.start_samples, ")");
}

// What the nodes of one pool offer the class, counted per layer.
struct PoolCensus {
  const SnapshotNode* fits_now = nullptr;
  const SnapshotNode* fits_if_unsafe_allowed = nullptr;
  const SnapshotNode* fits_if_healthy = nullptr;
  int unhealthy_free = 0;  // Free GPUs that are unhealthy, on that node.
  const SnapshotNode* driver_installing = nullptr;
  const SnapshotNode* driver_failed = nullptr;
  const SnapshotNode* provisioning = nullptr;
  int nodes = 0;
};

int FreeGpusIgnoringHealth(const SnapshotNode& node) {
  int count = 0;
  for (const SnapshotGpu& gpu : node.gpus) count += gpu.holder.empty() ? 1 : 0;
  return count;
}

int FreeUnhealthyGpus(const SnapshotNode& node) {
  int count = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    count += node.gpus[i].holder.empty() && !node.info.gpus[i].healthy ? 1 : 0;
  }
  return count;
}

PoolCensus TakeCensus(const core::WorkspaceClass& cls, const core::NodePool& pool,
                      const Snapshot& snapshot) {
  PoolCensus census;
  const GpuView view = ViewFor(cls, pool);
  const Resources request = RequestOf(cls);
  const int need = cls.gpu.count;
  snapshot.ForEachNode([&](const SnapshotNode& node) {
    if (node.info.pool != pool.id) return;
    ++census.nodes;
    if (!Covers(node.free, request)) return;
    const bool gpus_fit = node.free_gpus[static_cast<int>(view)] >= need;
    if (node.state == core::NodeState::kProvisioning) {
      if (!census.provisioning) census.provisioning = &node;
      return;
    }
    if (node.state != core::NodeState::kReady) return;  // Cordoned, draining, lost.
    if (!node.info.gpus.empty() && node.driver_state == core::DriverState::kNeedsDriver) {
      if (gpus_fit && !census.driver_installing) census.driver_installing = &node;
      return;
    }
    if (!node.info.gpus.empty() && node.driver_state == core::DriverState::kInstallFailed) {
      if (gpus_fit && !census.driver_failed) census.driver_failed = &node;
      return;
    }
    if (!node.schedulable) return;
    if (gpus_fit) {
      if (!census.fits_now) census.fits_now = &node;
      return;
    }
    if (view == GpuView::kVmSafe && node.free_gpus[static_cast<int>(GpuView::kVmAny)] >= need &&
        !census.fits_if_unsafe_allowed) {
      census.fits_if_unsafe_allowed = &node;
    }
    if (FreeGpusIgnoringHealth(node) >= need && !census.fits_if_healthy &&
        FreeUnhealthyGpus(node) > 0) {
      census.fits_if_healthy = &node;
      census.unhealthy_free = FreeUnhealthyGpus(node);
    }
  });
  return census;
}

// The reason being built for one pool, with what its layers share.
struct PoolWalk {
  const PendingContext& ctx;
  const core::NodePool& pool;
  const PoolCensus census;
  const PoolScalingView scaling;
  PendingReason reason;

  void AtNode(PendingCode code, const SnapshotNode& node) {
    reason.code = code;
    reason.node = node.info.name;
    reason.kernel = node.info.kernel_version;
    if (ctx.node_state_since) reason.since = ctx.node_state_since(node.info.name);
  }
  std::string SinceText(absl::string_view prefix, absl::string_view suffix = "") const {
    if (!reason.since) return "";
    return absl::StrCat(prefix, Ago(*reason.since, ctx.now), suffix);
  }
};

// Room exists now, or would with unsafe IOMMU groups or healthy GPUs.
bool ExplainRoom(PoolWalk& w) {
  const int need = w.ctx.cls->gpu.count;
  if (w.census.fits_now) {
    w.reason.code = PendingCode::kQueued;
    w.reason.node = w.census.fits_now->info.name;
    w.reason.detail =
        w.ctx.queue_position > 1
            ? absl::StrCat("queued at position ", w.ctx.queue_position, ": room exists in pool ",
                           w.pool.id, ", the workspaces ahead are served first")
            : absl::StrCat("room exists on node ", w.reason.node,
                           "; placing it at the next pass of the queue");
    return true;
  }
  if (w.census.fits_if_unsafe_allowed) {
    w.AtNode(PendingCode::kIommuUnsafe, *w.census.fits_if_unsafe_allowed);
    w.reason.detail = absl::StrCat("node ", w.reason.node, " has ", Gpus(need),
                                   " free, but only in IOMMU groups shared with other devices, "
                                   "which a VM class must not take (pool ", w.pool.id,
                                   " does not set allow_unsafe_iommu)");
    return true;
  }
  if (w.census.fits_if_healthy) {
    w.AtNode(PendingCode::kGpusUnhealthy, *w.census.fits_if_healthy);
    const int unhealthy = w.census.unhealthy_free;
    w.reason.detail = absl::StrCat("node ", w.reason.node, " would hold it, but ", Gpus(unhealthy),
                                   " of its free GPUs ", unhealthy == 1 ? "is" : "are",
                                   " unhealthy and not handed out");
    return true;
  }
  return false;
}

// A node exists or is coming, but is not ready for work yet.
bool ExplainNodeOnItsWay(PoolWalk& w) {
  if (w.census.driver_installing || w.census.driver_failed) {
    const bool failed = !w.census.driver_installing;
    const SnapshotNode& node = failed ? *w.census.driver_failed : *w.census.driver_installing;
    w.AtNode(failed ? PendingCode::kDriverInstallFailed : PendingCode::kDriverInstalling, node);
    if (auto requirement = core::FindDriverRequirement(*w.ctx.driver_policy,
                                                       node.info.kernel_version, node.info.os_id,
                                                       node.info.os_version)) {
      w.reason.image = requirement->installer_image;
    }
    w.reason.detail = absl::StrCat(
        failed ? "the driver install failed on node " : "waiting for the driver install on node ",
        w.reason.node, " (kernel ", w.reason.kernel,
        w.reason.image.empty() ? "" : absl::StrCat(", image ", w.reason.image), ")",
        w.SinceText(", since "), failed ? "; see ListDriverWork" : "");
    return true;
  }
  if (w.census.provisioning) {
    w.AtNode(PendingCode::kNodeProvisioning, *w.census.provisioning);
    w.reason.detail = absl::StrCat("waiting for node ", w.reason.node, " to become ready",
                                   w.SinceText(" (registered ", ")"), "; ",
                                   StartTimeText(w.scaling));
    return true;
  }
  return false;
}

// No node will hold it: a new one must be asked for.
void ExplainNewNode(PoolWalk& w) {
  const PoolScalingView& scaling = w.scaling;
  if (scaling.backoff_until && *scaling.backoff_until > w.ctx.now) {
    w.reason.code = PendingCode::kPoolBackingOff;
    w.reason.until = scaling.backoff_until;
    w.reason.detail = absl::StrCat(
        "pool ", w.pool.id, " is backing off after failed scale-ups until ",
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *scaling.backoff_until, absl::UTCTimeZone()),
        scaling.backoff_detail.empty() ? "" : absl::StrCat(" (", scaling.backoff_detail, ")"));
    return;
  }
  const int size = std::max(scaling.current_size, w.census.nodes);
  if (size >= w.pool.max_size) {
    w.reason.code = PendingCode::kPoolAtMaxSize;
    w.reason.detail = absl::StrCat("pool ", w.pool.id, " is at max_size ", w.pool.max_size, " (",
                                   size, size == 1 ? " node" : " nodes", ") and no node has ",
                                   Gpus(w.ctx.cls->gpu.count),
                                   " free; no scale-up can be requested");
    return;
  }
  if (scaling.has_signal && scaling.target_size > scaling.current_size) {
    w.reason.code = PendingCode::kScaleUpRequested;
    w.reason.since = scaling.scale_up_since;
    w.reason.detail = absl::StrCat("scale-up of pool ", w.pool.id, " from ",
                                   scaling.current_size, " to ", scaling.target_size,
                                   " nodes requested", w.SinceText(" "), "; ",
                                   StartTimeText(scaling));
    return;
  }
  w.reason.code = PendingCode::kScaleUpNotYetRequested;
  w.reason.detail = absl::StrCat("no node of pool ", w.pool.id, " has room; the scaler has not "
                                 "asked for one yet (pending work is batched for a moment first)");
}

// Across pools: the one that will let the workspace go first. Capacity on
// its way (an install, a boot, a requested scale-up) beats a dead end (a
// full pool, broken or unsafe GPUs, a failed install) that needs a person.
int Nearness(PendingCode code) {
  switch (code) {
    case PendingCode::kQueued: return 0;
    case PendingCode::kDriverInstalling: return 1;
    case PendingCode::kNodeProvisioning: return 2;
    case PendingCode::kScaleUpRequested: return 3;
    case PendingCode::kScaleUpNotYetRequested: return 4;
    case PendingCode::kPoolBackingOff: return 5;
    case PendingCode::kIommuUnsafe: return 6;
    case PendingCode::kGpusUnhealthy: return 7;
    case PendingCode::kDriverInstallFailed: return 8;
    case PendingCode::kPoolAtMaxSize: return 9;
    default: return 10;  // Not per pool.
  }
}

PendingReason ForPool(const PendingContext& ctx, const core::NodePool& pool) {
  auto scaling = ctx.scaling.find(pool.id);
  PoolWalk walk{ctx, pool, TakeCensus(*ctx.cls, pool, *ctx.snapshot),
                scaling == ctx.scaling.end() ? PoolScalingView{} : scaling->second, {}};
  walk.reason.pool = pool.id;
  walk.reason.gpus_needed = ctx.cls->gpu.count;
  walk.reason.queue_position = ctx.queue_position;
  if (!ExplainRoom(walk) && !ExplainNodeOnItsWay(walk)) ExplainNewNode(walk);
  return walk.reason;
}

}  // namespace

const char* PendingCodeName(PendingCode code) {
  switch (code) {
    case PendingCode::kOrgGpuQuota: return "org_gpu_quota";
    case PendingCode::kClassPolicy: return "class_policy";
    case PendingCode::kNoPool: return "no_pool";
    case PendingCode::kQueued: return "queued";
    case PendingCode::kIommuUnsafe: return "iommu_unsafe";
    case PendingCode::kGpusUnhealthy: return "gpus_unhealthy";
    case PendingCode::kDriverInstalling: return "driver_installing";
    case PendingCode::kDriverInstallFailed: return "driver_install_failed";
    case PendingCode::kNodeProvisioning: return "node_provisioning";
    case PendingCode::kPoolBackingOff: return "pool_backing_off";
    case PendingCode::kPoolAtMaxSize: return "pool_at_max_size";
    case PendingCode::kScaleUpRequested: return "scale_up_requested";
    case PendingCode::kScaleUpNotYetRequested: return "scale_up_not_yet_requested";
  }
  return "unknown";
}

PendingReason ExplainPending(const PendingContext& ctx) {
  const core::WorkspaceClass& cls = *ctx.cls;
  PendingReason reason;
  reason.gpus_needed = cls.gpu.count;
  reason.queue_position = ctx.queue_position;
  if (ctx.quota && ctx.quota->held + cls.gpu.count > ctx.quota->quota) {
    reason.code = PendingCode::kOrgGpuQuota;
    reason.quota = *ctx.quota;
    reason.detail = absl::StrCat("the org holds ", ctx.quota->held, " of its GPU quota of ",
                                 ctx.quota->quota, "; class ", cls.id, " needs ",
                                 Gpus(cls.gpu.count), " more");
    return reason;
  }
  if (ctx.policy_denial) {
    reason.code = PendingCode::kClassPolicy;
    reason.detail = *ctx.policy_denial;
    return reason;
  }
  bool first = true;
  for (const auto& tier : PlanPools(cls, *ctx.pools).tiers) {
    for (const core::NodePool* pool : tier) {
      PendingReason candidate = ForPool(ctx, *pool);
      if (first || Nearness(candidate.code) < Nearness(reason.code)) reason = std::move(candidate);
      first = false;
    }
  }
  if (first) {
    // No pool can ever hold it: placement refuses such a class, so this is
    // seen only when the catalog changed under a queued workspace.
    reason.code = PendingCode::kNoPool;
    reason.detail = WhyNoPool(cls, *ctx.pools);
  }
  return reason;
}

}  // namespace wsched::placement
