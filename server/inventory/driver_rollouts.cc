#include "server/inventory/driver_rollouts.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/store/unit_of_work.h"

namespace wsched::inventory {
namespace {

bool RolloutPool(const core::NodePool& pool) {
  return pool.is_gpu() && pool.gpu_binding == core::GpuBinding::kHost;
}

std::optional<core::RolloutRecord> RecordOf(const std::vector<store::DriverRolloutRow>& rows,
                                            const std::string& pool) {
  for (const auto& row : rows) {
    if (row.pool == pool) return row.record;
  }
  return std::nullopt;
}

// Whether any node of a rollout pool is outdated or released and not
// ready, from the mirror (no database read): the leader's step reads every
// node from the store only then, or while a record is kept.
bool AnyRolloutWork(const replica::ClusterView& view) {
  bool any = false;
  view.snapshot.ForEachNode([&](const placement::SnapshotNode& node) {
    if (any || node.info.gpus.empty()) return;
    const core::NodePool* pool = view.catalog->FindPool(node.info.pool);
    if (pool == nullptr || !RolloutPool(*pool)) return;
    any = node.driver_state == core::DriverState::kOutdated ||
          node.driver_state == core::DriverState::kNeedsDriver ||
          node.driver_state == core::DriverState::kInstalling ||
          node.driver_state == core::DriverState::kInstallFailed;
  });
  return any;
}

}  // namespace

std::vector<core::RolloutNode> DriverRollouts::RolloutNodesOf(
    const std::string& pool, const std::vector<NodeView>& nodes) const {
  const std::shared_ptr<const core::Catalog> catalog = parts_.mirror->CurrentCatalog();
  std::vector<core::RolloutNode> out;
  for (const NodeView& view : nodes) {
    const store::StoredNode& node = view.node;
    if (node.info.pool != pool || node.info.gpus.empty()) continue;
    auto requirement = core::FindDriverRequirement(catalog->driver_policy, node.info.kernel_version,
                                                   node.info.os_id, node.info.os_version);
    const bool released = requirement &&
                          node.driver_history.released_driver == requirement->driver_version &&
                          node.driver_history.verified_kernel == node.info.kernel_version;
    out.push_back({node.info.name, node.driver_state, released, view.workspace_count,
                   node.driver_detail});
  }
  return out;
}

absl::StatusOr<bool> DriverRollouts::ApplyStep(
    const std::string& pool, const std::optional<core::RolloutRecord>& planned_from,
    const core::RolloutStep& step) {
  const std::shared_ptr<const core::Catalog> catalog = parts_.mirror->CurrentCatalog();
  const absl::Time now = clock_();
  bool applied = false;
  std::vector<std::string> released;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "stepping a driver rollout",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    applied = false;
    released.clear();
    // Under the pool's row lock when there is one: a pause that lands
    // meanwhile wins, and this step is planned again.
    if (RecordOf(unit.nodes().LoadRollouts(pool, /*for_update=*/true), pool) != planned_from) {
      return absl::OkStatus();
    }
    for (const std::string& name : step.release) {
      auto loaded = unit.nodes().Load(name, /*for_update=*/true);
      if (!loaded.ok()) return loaded.status();
      // Changed since the plan (a heartbeat, a new kernel): the next step sees it.
      if (!loaded->has_value() || (*loaded)->driver_state != core::DriverState::kOutdated) continue;
      store::StoredNode node = **loaded;
      auto requirement = core::FindDriverRequirement(
          catalog->driver_policy, node.info.kernel_version, node.info.os_id, node.info.os_version);
      if (!requirement) continue;
      node.driver_history.released_driver = requirement->driver_version;
      node.driver_history.released_at = now;
      EvaluateDriverInto(*catalog, node);
      node.version = unit.nodes().Save(node);
      released.push_back(name);
    }
    if (step.record) {
      if (step.record != planned_from) unit.nodes().SaveRollout(pool, *step.record);
    } else if (planned_from) {
      unit.nodes().DeleteRollout(pool);
    }
    applied = true;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (!released.empty()) {
    if (absl::Status caught_up = parts_.follower->CatchUp(); !caught_up.ok()) return caught_up;
    parts_.drains->Pool(pool);  // Their agents are answered with the work; nothing new fits there.
  }
  for (const std::string& name : released) {
    log::Info("driver rollout released a node",
              {{"pool", pool}, {"node", name},
               {"canary", step.record && step.record->canary == name ? "true" : "false"}});
  }
  if (applied && step.stopped_now) {
    log::Warning("driver rollout stopped", {{"pool", pool}, {"reason", step.record->reason}});
  } else if (applied && !step.record && planned_from) {
    log::Info("driver rollout finished", {{"pool", pool}});
  }
  return applied;
}

absl::StatusOr<std::vector<store::DriverRolloutRow>> DriverRollouts::LoadRecords() {
  if (parts_.db == nullptr) return absl::FailedPreconditionError("no database");
  std::vector<store::DriverRolloutRow> rows;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "reading driver rollouts",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    rows = unit.nodes().LoadRollouts();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return rows;
}

absl::StatusOr<std::vector<DriverRolloutView>> DriverRollouts::Step() {
  absl::StatusOr<std::vector<store::DriverRolloutRow>> rows = LoadRecords();
  if (!rows.ok()) return rows.status();
  std::vector<DriverRolloutView> views;
  if (rows->empty() && !AnyRolloutWork(*parts_.mirror->View())) {
    for (const core::NodePool& pool : parts_.mirror->CurrentCatalog()->pools) {
      if (RolloutPool(pool)) views.push_back({pool.id, {}, false, {}, pool.driver_rollout.max_unavailable});
    }
    return views;
  }
  auto nodes = parts_.inventory->AllNodes();
  if (!nodes.ok()) return nodes.status();
  for (const core::NodePool& pool : parts_.mirror->CurrentCatalog()->pools) {
    if (!RolloutPool(pool)) continue;
    const std::optional<core::RolloutRecord> kept = RecordOf(*rows, pool.id);
    core::RolloutStep step = core::PlanRollout(pool.driver_rollout, RolloutNodesOf(pool.id, *nodes), kept);
    if (!step.release.empty() || step.record != kept) {
      auto applied = ApplyStep(pool.id, kept, step);
      if (!applied.ok()) return applied.status();
      if (!*applied) continue;  // Planned again next step.
    }
    views.push_back({pool.id, step.record.value_or(core::RolloutRecord{}), step.record.has_value(),
                     step.counts, pool.driver_rollout.max_unavailable});
  }
  return views;
}

absl::StatusOr<std::vector<DriverRolloutView>> DriverRollouts::List(const std::string& pool) {
  if (parts_.db == nullptr) return absl::FailedPreconditionError("no database");
  const std::shared_ptr<const core::Catalog> catalog = parts_.mirror->CurrentCatalog();
  if (!pool.empty() && catalog->FindPool(pool) == nullptr) {
    return core::NotFoundError(core::ErrorReason::kPoolNotFound, "pool", pool);
  }
  auto nodes = parts_.inventory->AllNodes();
  if (!nodes.ok()) return nodes.status();
  absl::StatusOr<std::vector<store::DriverRolloutRow>> rows = LoadRecords();
  if (!rows.ok()) return rows.status();
  std::vector<DriverRolloutView> views;
  for (const core::NodePool& each : catalog->pools) {
    if (!RolloutPool(each) || (!pool.empty() && each.id != pool)) continue;
    const std::optional<core::RolloutRecord> kept = RecordOf(*rows, each.id);
    views.push_back({each.id, kept.value_or(core::RolloutRecord{}), kept.has_value(),
                     core::CountRollout(RolloutNodesOf(each.id, *nodes)),
                     each.driver_rollout.max_unavailable});
  }
  return views;
}

absl::StatusOr<DriverRolloutView> DriverRollouts::SetPaused(const std::string& pool, bool paused,
                                                            const std::string& reason) {
  if (parts_.db == nullptr) return absl::FailedPreconditionError("no database");
  const std::shared_ptr<const core::Catalog> catalog = parts_.mirror->CurrentCatalog();
  const core::NodePool* declared = catalog->FindPool(pool);
  if (declared == nullptr) return core::NotFoundError(core::ErrorReason::kPoolNotFound, "pool", pool);
  if (!RolloutPool(*declared)) {
    return core::PreconditionError(
        core::ErrorReason::kPreconditionFailed, "POOL", absl::StrCat("pool/", pool),
        absl::StrCat("pool: ", pool, " has no driver rollouts (only GPU pools on the host's ",
                     "driver have them; gpu_binding vfio and CPU pools need no NVIDIA driver)"));
  }
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "pausing or resuming a driver rollout",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    core::RolloutRecord record =
        RecordOf(unit.nodes().LoadRollouts(pool, /*for_update=*/true), pool)
            .value_or(core::RolloutRecord{});
    record.paused = paused;
    record.reason = paused ? reason : "";
    unit.nodes().SaveRollout(pool, record);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  log::Info(paused ? "driver rollout paused" : "driver rollout resumed",
            {{"pool", pool}, {"reason", reason}});
  auto views = List(pool);
  if (!views.ok()) return views.status();
  return views->front();
}

}  // namespace wsched::inventory
