#include "server/placement/pending_reason.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
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

PendingReason ForPool(const PendingContext& ctx, const core::NodePool& pool) {
  const core::WorkspaceClass& cls = *ctx.cls;
  PoolCensus census = TakeCensus(cls, pool, *ctx.snapshot);
  PendingReason reason;
  reason.pool = pool.id;
  reason.gpus_needed = cls.gpu.count;
  reason.queue_position = ctx.queue_position;
  auto since = [&](const SnapshotNode& node) -> std::optional<absl::Time> {
    return ctx.node_state_since ? ctx.node_state_since(node.info.name) : std::nullopt;
  };
  auto at_node = [&](PendingCode code, const SnapshotNode& node) {
    reason.code = code;
    reason.node = node.info.name;
    reason.kernel = node.info.kernel_version;
    reason.since = since(node);
  };
  auto scaling_it = ctx.scaling.find(pool.id);
  const PoolScalingView scaling =
      scaling_it == ctx.scaling.end() ? PoolScalingView{} : scaling_it->second;

  if (census.fits_now) {
    reason.code = PendingCode::kQueued;
    reason.node = census.fits_now->info.name;
    reason.detail = ctx.queue_position > 1
                        ? absl::StrCat("queued at position ", ctx.queue_position,
                                       ": room exists in pool ", pool.id,
                                       ", the workspaces ahead are served first")
                        : absl::StrCat("room exists on node ", reason.node,
                                       "; placing it at the next pass of the queue");
    return reason;
  }
  if (census.fits_if_unsafe_allowed) {
    at_node(PendingCode::kIommuUnsafe, *census.fits_if_unsafe_allowed);
    reason.detail = absl::StrCat("node ", reason.node, " has ", Gpus(cls.gpu.count),
                                 " free, but only in IOMMU groups shared with other devices, "
                                 "which a VM class must not take (pool ", pool.id,
                                 " does not set allow_unsafe_iommu)");
    return reason;
  }
  if (census.fits_if_healthy) {
    at_node(PendingCode::kGpusUnhealthy, *census.fits_if_healthy);
    reason.detail = absl::StrCat("node ", reason.node, " would hold it, but ",
                                 Gpus(census.unhealthy_free), " of its free GPUs ",
                                 census.unhealthy_free == 1 ? "is" : "are",
                                 " unhealthy and not handed out");
    return reason;
  }
  if (census.driver_installing || census.driver_failed) {
    const bool failed = !census.driver_installing;
    const SnapshotNode& node = failed ? *census.driver_failed : *census.driver_installing;
    at_node(failed ? PendingCode::kDriverInstallFailed : PendingCode::kDriverInstalling, node);
    if (auto requirement = core::FindDriverRequirement(*ctx.driver_policy, node.info.kernel_version,
                                                       node.info.os_id, node.info.os_version)) {
      reason.image = requirement->installer_image;
    }
    reason.detail = absl::StrCat(
        failed ? "the driver install failed on node " : "waiting for the driver install on node ",
        reason.node, " (kernel ", reason.kernel,
        reason.image.empty() ? "" : absl::StrCat(", image ", reason.image), ")",
        reason.since ? absl::StrCat(", since ", Ago(*reason.since, ctx.now)) : "",
        failed ? "; see ListDriverWork" : "");
    return reason;
  }
  if (census.provisioning) {
    at_node(PendingCode::kNodeProvisioning, *census.provisioning);
    reason.detail = absl::StrCat(
        "waiting for node ", reason.node, " to become ready",
        reason.since ? absl::StrCat(" (registered ", Ago(*reason.since, ctx.now), ")") : "",
        "; ", StartTimeText(scaling));
    return reason;
  }
  // A new node is needed.
  if (scaling.backoff_until && *scaling.backoff_until > ctx.now) {
    reason.code = PendingCode::kPoolBackingOff;
    reason.until = scaling.backoff_until;
    reason.detail = absl::StrCat(
        "pool ", pool.id, " is backing off after failed scale-ups until ",
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *scaling.backoff_until, absl::UTCTimeZone()),
        scaling.backoff_detail.empty() ? "" : absl::StrCat(" (", scaling.backoff_detail, ")"));
    return reason;
  }
  const int size = std::max(scaling.current_size, census.nodes);
  if (size >= pool.max_size) {
    reason.code = PendingCode::kPoolAtMaxSize;
    reason.detail = absl::StrCat("pool ", pool.id, " is at max_size ", pool.max_size, " (",
                                 size, size == 1 ? " node" : " nodes",
                                 ") and no node has ", Gpus(cls.gpu.count),
                                 " free; no scale-up can be requested");
    return reason;
  }
  if (scaling.has_signal && scaling.target_size > scaling.current_size) {
    reason.code = PendingCode::kScaleUpRequested;
    reason.since = scaling.scale_up_since;
    reason.detail = absl::StrCat("scale-up of pool ", pool.id, " from ", scaling.current_size,
                                 " to ", scaling.target_size, " nodes requested",
                                 reason.since ? absl::StrCat(" ", Ago(*reason.since, ctx.now)) : "",
                                 "; ", StartTimeText(scaling));
    return reason;
  }
  reason.code = PendingCode::kScaleUpNotYetRequested;
  reason.detail = absl::StrCat("no node of pool ", pool.id, " has room; the scaler has not asked "
                               "for one yet (pending work is batched for a moment first)");
  return reason;
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
      if (first || candidate.code < reason.code) reason = std::move(candidate);
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
