// Nodes: registration, heartbeats, admin states, lost detection, driver work.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "server/core/driver_install.h"
#include "server/core/driver_readiness.h"
#include "server/core/error_reason.h"
#include "server/core/node_validation.h"
#include "server/log/log.h"
#include "server/core/vfio_binding.h"
#include "server/placement/iommu_units.h"
#include "server/inventory/gpu_health.h"
#include "server/inventory/node_inventory.h"
#include "server/store/unit_of_work.h"

namespace wsched::inventory {
namespace {


absl::Status BootstrapNodeExists(const std::string& name, const std::string& principal) {
  return core::ReasonError(
      absl::StrCat("node ", name, " is registered already (or the token is another node's); a "
                   "bootstrap credential registers only new nodes: the node's own token re-registers "
                   "it, or an admin removes the node or rotates its credential"),
      {.reason = core::ErrorReason::kBootstrapNodeExists,
       .metadata = {{"principal", principal}, {"node", name}}});
}

// The node as a heartbeat received at `now` leaves it (the lost -> ready
// return aside).
store::StoredNode AfterHeartbeat(const store::StoredNode& before, const HeartbeatInput& input,
                                 const core::Catalog& catalog, absl::Time now,
                                 absl::Duration gpu_healthy_for) {
  store::StoredNode after = before;
  if (!input.kernel_version.empty()) after.info.kernel_version = input.kernel_version;
  // Empty means "not reported": an agent that could not read the version
  // this time must not make the node look driverless.
  if (!input.driver_version.empty()) after.info.driver_version = input.driver_version;
  for (auto& gpu : after.info.gpus) {
    auto it = input.gpu_healthy_by_uuid.find(gpu.uuid);
    if (it == input.gpu_healthy_by_uuid.end()) continue;
    GpuHealthReport report{it->second, ""};
    if (auto reason = input.gpu_health_reason_by_uuid.find(gpu.uuid);
        reason != input.gpu_health_reason_by_uuid.end() && !report.healthy) {
      report.reason = reason->second;
    }
    ApplyGpuHealthReport(gpu, report, now, gpu_healthy_for);
  }
  after.driver_history =
      core::HistoryOnReport(catalog.driver_policy, after.info, after.driver_history, false);
  EvaluateDriverInto(catalog, after);
  return after;
}

// Whether anything the scheduler decides with differs: state, kernel,
// driver and its readiness, GPU health. Anything else is liveness.
bool SameForScheduling(const store::StoredNode& a, const store::StoredNode& b) {
  if (a.state != b.state || a.info.kernel_version != b.info.kernel_version ||
      a.info.driver_version != b.info.driver_version || a.driver_state != b.driver_state ||
      a.driver_detail != b.driver_detail ||
      a.driver_history != b.driver_history ||
      a.info.gpus.size() != b.info.gpus.size()) {
    return false;
  }
  for (size_t i = 0; i < a.info.gpus.size(); ++i) {
    const core::Gpu& x = a.info.gpus[i];
    const core::Gpu& y = b.info.gpus[i];
    if (x.healthy != y.healthy || x.health_reason != y.health_reason ||
        x.unhealthy_since != y.unhealthy_since ||
        x.reported_healthy_since != y.reported_healthy_since) {
      return false;
    }
  }
  return true;
}

// Operators look for these lines when a GPU goes out or comes back.
void LogGpuHealthChanges(const store::StoredNode& before, const store::StoredNode& after) {
  for (size_t i = 0; i < before.info.gpus.size() && i < after.info.gpus.size(); ++i) {
    const core::Gpu& was = before.info.gpus[i];
    const core::Gpu& now = after.info.gpus[i];
    if (was.healthy && !now.healthy) {
      log::Warning("GPU out of service: unhealthy",
                   {{"node", after.info.name}, {"gpu", now.uuid}, {"reason", now.health_reason}});
    } else if (!was.healthy && now.healthy) {
      log::Info("GPU back in service: healthy long enough",
                {{"node", after.info.name}, {"gpu", now.uuid}});
    }
  }
}

// The samples of the node's own GPUs: a UUID the node does not have would
// be counted in its pool's figures as a GPU nobody holds.
std::vector<usage::GpuUsage> SamplesOfItsGpus(const std::vector<usage::GpuUsage>& usage,
                                       const core::NodeInfo& node) {
  std::vector<usage::GpuUsage> own;
  own.reserve(usage.size());
  for (const usage::GpuUsage& sample : usage) {
    for (const core::Gpu& gpu : node.gpus) {
      if (gpu.uuid == sample.uuid) {
        own.push_back(sample);
        break;
      }
    }
  }
  return own;
}

// The stored GPU with `uuid`, or null.
const core::Gpu* FindGpu(const core::NodeInfo& node, const std::string& uuid) {
  for (const core::Gpu& gpu : node.gpus) {
    if (gpu.uuid == uuid) return &gpu;
  }
  return nullptr;
}

// A provider id or GPU UUID is one machine's: a node that reports one
// another node claims would let an actuator that scales that node down end
// the other's instance. Refused, naming the holder, whatever its state (a
// lost node's machine may come back under it; an admin removes it when
// it is gone).
absl::Status RefuseClaimedIdentity(store::UnitOfWork& unit, const core::NodeInfo& info) {
  std::vector<std::string> uuids;
  for (const core::Gpu& gpu : info.gpus) uuids.push_back(gpu.uuid);
  std::optional<store::IdentityClaim> claim =
      unit.nodes().FindIdentityClaim(info.name, info.provider_id, uuids);
  if (!claim) return absl::OkStatus();
  const std::string field = claim->what == "provider_id" ? "node.provider_id" : "node.gpus.uuid";
  return core::PreconditionError(
      core::ErrorReason::kNodeIdentityClaimed, "STATE", absl::StrCat("node/", claim->node),
      absl::StrCat(field, ": ", claim->what == "provider_id" ? "provider id " : "GPU ",
                   claim->what == "provider_id" ? info.provider_id : claim->what,
                   " is claimed by node ", claim->node, "; remove ", claim->node,
                   " first if its machine is gone"),
      {{"node", info.name}, {"holder", claim->node}, {"claim", claim->what}});
}

}  // namespace

namespace {

// The node's pool's GPU binding; host for a pool the catalog lost.
core::GpuBinding BindingOf(const core::Catalog& catalog, const core::NodeInfo& node) {
  const core::NodePool* pool = catalog.FindPool(node.pool);
  return pool != nullptr ? pool->gpu_binding : core::GpuBinding::kHost;
}

}  // namespace

void EvaluateDriverInto(const core::Catalog& catalog, store::StoredNode& node) {
  core::DriverReadiness readiness = core::EvaluateDriver(
      catalog.driver_policy, node.info, node.driver_history, BindingOf(catalog, node.info));
  node.driver_state = readiness.state;
  node.driver_detail = readiness.detail;
}

absl::Status UnknownNodeError(const std::string& name) {
  return core::NotFoundError(core::ErrorReason::kNodeNotFound, "node", name,
                             absl::StrCat("node ", name, " is not registered"));
}

NodeInventory::NodeInventory(Parts parts, Options options, Clock clock)
    : parts_(parts),
      options_(options),
      clock_(std::move(clock)),
      liveness_([db = parts.db](const std::vector<std::string>& nodes) {
        if (db == nullptr) return absl::FailedPreconditionError("no database to record liveness in");
        return store::UnitOfWork::Run(*db, "recording node liveness",
                                      [&](store::UnitOfWork& unit) -> absl::Status {
          unit.nodes().RecordHeartbeats(nodes);
          return absl::OkStatus();
        });
      }) {
  if (parts_.db != nullptr) timing_ = std::make_unique<TimingStats>(parts_.db, clock_);
}

absl::Status NodeInventory::CatchUp() {
  if (parts_.follower == nullptr) return absl::FailedPreconditionError("no change feed to catch up with");
  return parts_.follower->CatchUp();
}

void NodeInventory::DrainEverything() {
  if (parts_.drains != nullptr) parts_.drains->Everything();
}

void NodeInventory::DrainPool(const std::string& pool) {
  if (parts_.drains != nullptr) parts_.drains->Pool(pool);
}

NodeView NodeInventory::ViewOf(const store::StoredNode& node) const {
  return ViewOf(node, *parts_.mirror->View());
}

NodeView NodeInventory::CommittedViewOf(const store::StoredNode &node) {
  NodeView view;
  view.node = node;
  placement::NodeIommu iommu = placement::AnalyzeIommu(node.info);
  for (size_t i = 0; i < node.info.gpus.size(); ++i) {
    NodeView::GpuView gpu;
    if (i < iommu.gpus.size()) {
      gpu.passthrough_safe = iommu.gpus[i].safe;
      gpu.passthrough_unsafe_reason = iommu.gpus[i].reason;
    }
    view.gpus.push_back(std::move(gpu));
  }
  return view;
}

NodeView NodeInventory::ViewOf(const store::StoredNode &node,
                               const replica::ClusterView &cluster) {
  NodeView view = CommittedViewOf(node);
  const placement::SnapshotNode *mirrored =
      cluster.snapshot.FindNode(node.info.name);
  const core::GpuBinding binding = BindingOf(*cluster.catalog, node.info);
  for (size_t i = 0; i < view.gpus.size(); ++i) {
    NodeView::GpuView &gpu = view.gpus[i];
    gpu.binding_problem = core::PoolBindingProblem(node.info.gpus[i], binding).value_or("");
    if (mirrored != nullptr && i < mirrored->gpus.size()) gpu.held_by = mirrored->gpus[i].holder;
  }
  return view;
}

absl::StatusOr<NodeView> NodeInventory::RegisterNode(const core::NodeInfo& reported,
                                                     const NewNodeCredential* bootstrap) {
  if (absl::Status valid = core::ValidateNodeInfo(reported); !valid.ok()) return valid;
  // Shared, never copied: the catalog is replaced whole, not changed.
  std::shared_ptr<const core::Catalog> current = parts_.mirror->CurrentCatalog();
  if (current->FindPool(reported.pool) == nullptr) {
    // Refuse only on the database's word: the pool may have been added on
    // another replica a moment ago.
    if (absl::Status caught_up = CatchUp(); !caught_up.ok()) return caught_up;
    current = parts_.mirror->CurrentCatalog();
  }
  const core::Catalog& catalog = *current;
  const core::NodePool* pool = catalog.FindPool(reported.pool);
  if (pool == nullptr) {
    return core::InvalidFieldError(
        "node.pool", absl::StrCat("pool ", reported.pool, " does not exist in the catalog"));
  }
  core::NodeInfo info = reported;
  // Agents cannot always tell how much scratch and workspace disk a node
  // offers (it may be network storage); unreported means the pool's shape.
  if (info.ephemeral_storage_bytes == 0) info.ephemeral_storage_bytes = pool->shape.ephemeral_storage_bytes;
  if (info.disk_bytes == 0) info.disk_bytes = pool->shape.disk_bytes;
  store::StoredNode stored;
  const absl::Time now = clock_();
  // One unit: the pool check, the lost node's release and the save commit
  // together, under the node's row lock.
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "registering node",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(info.name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    bool first = !existing->has_value();
    if (bootstrap != nullptr && !first) return BootstrapNodeExists(info.name, bootstrap->issued_by);
    if (!first) {
      stored = **existing;
      if (stored.info.pool != info.pool) {
        return core::PreconditionError(
            core::ErrorReason::kNodeInOtherPool, "STATE", absl::StrCat("node/", info.name),
            absl::StrCat("node.pool: node ", info.name, " is registered in pool ",
                         stored.info.pool, "; remove it before registering it in ", info.pool),
            {{"node", info.name}, {"pool", info.pool}, {"registered_pool", stored.info.pool}});
      }
      // A lost node that registers again comes back empty.
      if (stored.state == core::NodeState::kLost) {
        unit.nodes().ReleaseLostWorkspaces(info.name);
        stored.state = core::NodeState::kReady;
      }
      if (stored.state == core::NodeState::kProvisioning) stored.state = core::NodeState::kReady;
    } else {
      stored.state = core::NodeState::kReady;
    }
    if (absl::Status claimed = RefuseClaimedIdentity(unit, info); !claimed.ok()) return claimed;
    const core::NodeInfo previous = stored.info;
    stored.info = info;
    for (core::Gpu& gpu : stored.info.gpus) {
      HealthOnRegister(first ? nullptr : FindGpu(previous, gpu.uuid), gpu, now,
                       options_.gpu_healthy_for);
    }
    stored.driver_history =
        core::HistoryOnReport(catalog.driver_policy, info, stored.driver_history, first);
    EvaluateDriverInto(catalog, stored);
    stored.version = unit.nodes().Save(stored);
    // A concurrent bootstrap of the same name waited for this row and
    // overwrote it; the credential's primary key refuses it, and the
    // rollback undoes the overwrite.
    if (bootstrap != nullptr &&
        !unit.node_credentials().Issue(info.name, bootstrap->token_sha256, bootstrap->issued_by)) {
      return BootstrapNodeExists(info.name, bootstrap->issued_by);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (bootstrap != nullptr) parts_.credentials->Refresh(info.name);
  if (absl::Status caught_up = CatchUp(); !caught_up.ok()) return caught_up;
  log::Info("node registered", {{"node", info.name}, {"pool", info.pool},
                                {"gpus", absl::StrCat(info.gpus.size())},
                                {"driver", core::DriverStateName(stored.driver_state)}});
  DrainEverything();  // New capacity: place pending work.
  return ViewOf(stored);
}

absl::StatusOr<HeartbeatResult> NodeInventory::Heartbeat(const HeartbeatInput& input) {
  HeartbeatResult result;
  if (TryLivenessOnly(input, result)) {
    liveness_.Record(input.node_name);
    parts_.metrics->Heartbeat("skipped");
    return result;
  }
  return WriteHeartbeat(input);
}

bool NodeInventory::TryLivenessOnly(const HeartbeatInput& input, HeartbeatResult& result) {
  std::shared_ptr<const store::StoredNode> known;
  std::shared_ptr<const core::Catalog> catalog;
  usage::GpuHolders holders;
  {
    Mirror::Node mirrored = parts_.mirror->MirroredNode(input.node_name);
    // Unknown here (maybe registered elsewhere a moment ago) or lost: the
    // database decides.
    if (mirrored.stored == nullptr || mirrored.stored->state == core::NodeState::kLost) return false;
    known = std::move(mirrored.stored);
    holders = std::move(mirrored.holders);
    catalog = parts_.mirror->CurrentCatalog();
  }
  // Both are immutable: what the heartbeat would change is worked out
  // without the placement lock.
  if (!SameForScheduling(*known, AfterHeartbeat(*known, input, *catalog, clock_(),
                                                options_.gpu_healthy_for))) {
    return false;
  }
  result.state = known->state;
  result.pool = known->info.pool;
  result.driver_work = AgentDriverWork(*known);
  // Samples stay in memory: a heartbeat that only brings new ones writes
  // nothing and copies no view (docs/architecture.md rule 2).
  parts_.usage->Record(input.node_name, known->info.pool, SamplesOfItsGpus(input.usage, known->info),
                holders);
  return true;
}

absl::StatusOr<HeartbeatResult> NodeInventory::WriteHeartbeat(const HeartbeatInput& input) {
  if (parts_.db == nullptr) {
    return absl::FailedPreconditionError("an inventory without a database cannot write a heartbeat");
  }
  const std::shared_ptr<const core::Catalog> current = parts_.mirror->CurrentCatalog();
  const core::Catalog& catalog = *current;
  HeartbeatResult result;
  store::StoredNode stored;
  store::StoredNode before;
  bool written = false;
  const absl::Time now = clock_();
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "heartbeat",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(input.node_name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) {
      result.reregister = true;
      return absl::OkStatus();
    }
    before = **existing;
    stored = AfterHeartbeat(**existing, input, catalog, now, options_.gpu_healthy_for);
    if (stored.state == core::NodeState::kLost) {
      unit.nodes().ReleaseLostWorkspaces(stored.info.name);
      stored.state = core::NodeState::kReady;
    }
    written = !SameForScheduling(**existing, stored);
    if (!written) {
      unit.nodes().RecordHeartbeats({stored.info.name});  // This replica's picture was behind.
      return absl::OkStatus();
    }
    stored.version = unit.nodes().Save(stored);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (result.reregister) return result;
  if (written) LogGpuHealthChanges(before, stored);
  parts_.metrics->Heartbeat("written");
  if (absl::Status caught_up = CatchUp(); !caught_up.ok()) return caught_up;
  result.state = stored.state;
  result.pool = stored.info.pool;
  result.driver_work = AgentDriverWork(stored);
  usage::GpuHolders holders;
  {
    holders = parts_.mirror->MirroredNode(stored.info.name).holders;
    if (written) DrainPool(stored.info.pool);
  }
  parts_.usage->Record(stored.info.name, stored.info.pool, SamplesOfItsGpus(input.usage, stored.info),
                holders);
  return result;
}

absl::StatusOr<NodeView> NodeInventory::SetNodeAdminState(const std::string& name,
                                                      core::NodeState state,
                                                      int64_t expected_version) {
  store::StoredNode stored;
  int workspaces = 0;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "changing node state",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return UnknownNodeError(name);
    stored = **existing;
    if (expected_version != 0 && stored.version != expected_version) {
      return core::VersionMismatchError("node", name, stored.version, expected_version);
    }
    if (stored.state == core::NodeState::kLost) {
      return core::PreconditionError(
          core::ErrorReason::kNodeLost, "STATE", absl::StrCat("node/", name),
          absl::StrCat("node ", name, " is lost; it must heartbeat or re-register first"),
          {{"node", name}});
    }
    stored.state = state;
    stored.version = unit.nodes().SetState(name, state);
    workspaces = unit.nodes().WorkspaceCounts({name})[name];
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (absl::Status caught_up = CatchUp(); !caught_up.ok()) return caught_up;
  if (state == core::NodeState::kReady) DrainEverything();
  NodeView view = ViewOf(stored);
  view.workspace_count = workspaces;
  return view;
}

absl::Status NodeInventory::RemoveNode(const std::string& name) {
  std::vector<std::string> lost;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "removing node",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return UnknownNodeError(name);
    // Whoever gets the name next registers afresh (bootstrap included).
    unit.node_credentials().Revoke(name);
    lost = unit.nodes().Delete(name);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  parts_.credentials->Refresh(name);
  log::Info("node removed", {{"node", name}, {"workspaces_lost", absl::StrCat(lost.size())}});
  return CatchUp();
}

absl::StatusOr<NodeView> NodeInventory::GetNode(const std::string& name) {
  std::optional<store::StoredNode> stored;
  int workspaces = 0;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "reading node",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(name, false);
    if (!existing.ok()) return existing.status();
    stored = std::move(*existing);
    workspaces = unit.nodes().WorkspaceCounts({name})[name];
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (!stored) return UnknownNodeError(name);
  NodeView view = ViewOf(*stored);
  view.workspace_count = workspaces;
  return view;
}

absl::StatusOr<core::Page<NodeView>> NodeInventory::ListNodes(const std::string& pool,
                                                         const core::PageRequest& page) {
  std::vector<store::StoredNode> nodes;
  std::map<std::string, int> workspaces;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "listing nodes",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto loaded = unit.nodes().LoadPage(pool, page.after, page.size + 1);
    if (!loaded.ok()) return loaded.status();
    nodes = std::move(*loaded);
    std::vector<std::string> names;
    for (const auto& node : nodes) names.push_back(node.info.name);
    if (!names.empty()) workspaces = unit.nodes().WorkspaceCounts(names);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return core::PageFromRows(ViewsOf(nodes, workspaces), page,
                            [](const NodeView& view) { return view.node.info.name; });
}

absl::StatusOr<std::vector<NodeView>> NodeInventory::AllNodes() {
  std::vector<store::StoredNode> nodes;
  std::map<std::string, int> workspaces;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "reading nodes",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto loaded = unit.nodes().LoadAll();
    if (!loaded.ok()) return loaded.status();
    nodes = std::move(*loaded);
    workspaces = unit.nodes().WorkspaceCounts();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return ViewsOf(nodes, workspaces);
}

std::vector<NodeView> NodeInventory::ViewsOf(const std::vector<store::StoredNode>& nodes,
                                         const std::map<std::string, int>& workspaces) {
  std::vector<NodeView> views;
  const std::shared_ptr<const replica::ClusterView> cluster = parts_.mirror->View();
  for (const auto& node : nodes) {
    NodeView view = ViewOf(node, *cluster);
    // From the store, not GPU holders: CPU workspaces count too.
    auto count = workspaces.find(node.info.name);
    view.workspace_count = count == workspaces.end() ? 0 : count->second;
    views.push_back(std::move(view));
  }
  return views;
}

absl::StatusOr<std::vector<PoolView>> NodeInventory::ListPools() {
  auto nodes = AllNodes();
  if (!nodes.ok()) return nodes.status();
  std::vector<PoolView> pools;
  for (const auto& pool : parts_.mirror->CurrentCatalog()->pools) {
    PoolView view;
    view.pool = pool;
    for (const auto& node : *nodes) {
      if (node.node.info.pool != pool.id) continue;
      view.nodes_by_state[core::NodeStateName(node.node.state)]++;
      for (size_t i = 0; i < node.gpus.size(); ++i) {
        view.gpus_total++;
        if (!node.gpus[i].held_by.empty()) view.gpus_held++;
        if (!node.node.info.gpus[i].healthy) view.gpus_unhealthy++;
      }
    }
    pools.push_back(std::move(view));
  }
  return pools;
}

namespace {

// A node a rollout released lists as work only once its workspaces ended
// (or its pool's drain deadline passed): an operator installing by hand
// follows the same rule as the agents.
bool InstallMayStartOn(const core::Catalog& catalog, const NodeView& view,
                       const core::DriverReadiness& readiness, absl::Time now) {
  const core::NodePool* pool = catalog.FindPool(view.node.info.pool);
  return core::InstallMayStart(view.node.driver_history, view.node.info,
                               readiness.requirement->driver_version, view.workspace_count,
                               pool != nullptr ? pool->driver_rollout : core::DriverRollout{}, now);
}

}  // namespace

absl::StatusOr<NodeInventory::DriverWorkPage> NodeInventory::ListDriverWork(
    const core::PageRequest& page) {
  auto nodes = AllNodes();
  if (!nodes.ok()) return nodes.status();
  const std::shared_ptr<const core::Catalog> current = parts_.mirror->CurrentCatalog();
  const core::Catalog& catalog = *current;
  // By node name (AllNodes' order): work, or nullopt for no policy.
  std::vector<std::pair<std::string, std::optional<DriverWork>>> entries;
  for (const auto& view : *nodes) {
    const core::NodeInfo& info = view.node.info;
    core::DriverReadiness readiness = core::EvaluateDriver(
        catalog.driver_policy, info, view.node.driver_history, BindingOf(catalog, info));
    if (readiness.state == core::DriverState::kNoPolicy) {
      entries.emplace_back(info.name, std::nullopt);
    } else if ((readiness.state == core::DriverState::kNeedsDriver ||
                readiness.state == core::DriverState::kInstallFailed) &&
               InstallMayStartOn(catalog, view, readiness, clock_())) {
      entries.emplace_back(info.name, DriverWork{info.name, info.kernel_version, info.os_id,
                                                 info.os_version,
                                                 readiness.requirement->driver_version,
                                                 readiness.requirement->installer_image,
                                                 info.pool});
    }
  }
  DriverWorkPage out;
  for (auto& [name, work] : core::PageOf(entries, page, [](const auto& e) { return e.first; },
                                         &out.next_page_token)) {
    if (work) {
      out.work.push_back(std::move(*work));
    } else {
      out.nodes_without_policy.push_back(name);
    }
  }
  return out;
}

std::optional<DriverWork> NodeInventory::AgentDriverWork(const store::StoredNode& node) const {
  const std::shared_ptr<const core::Catalog> catalog = parts_.mirror->CurrentCatalog();
  const core::NodePool* pool = catalog->FindPool(node.info.pool);
  if (pool == nullptr || !core::AgentRunsDriverInstall(pool->driver_install, node.driver_state)) {
    return std::nullopt;
  }
  auto requirement = core::FindDriverRequirement(catalog->driver_policy, node.info.kernel_version,
                                                 node.info.os_id, node.info.os_version);
  if (!requirement) return std::nullopt;
  // Released by a rollout: not while workspaces still run on the old driver.
  const int busy = parts_.mirror->MirroredNode(node.info.name).holds_work ? 1 : 0;
  if (!core::InstallMayStart(node.driver_history, node.info, requirement->driver_version, busy,
                             pool->driver_rollout, clock_())) {
    return std::nullopt;
  }
  return DriverWork{node.info.name,          node.info.kernel_version,
                    node.info.os_id,         node.info.os_version,
                    requirement->driver_version, requirement->installer_image,
                    node.info.pool};
}

namespace {

// What the node's history becomes with the report.
void RecordOutcome(const DriverInstallReport& report, core::DriverHistory& history) {
  using Outcome = DriverInstallReport::Outcome;
  history.installing_kernel.clear();
  switch (report.outcome) {
    case Outcome::kStarted:
      history.installing_kernel = report.kernel;
      break;
    case Outcome::kSucceeded:
      history.verified_kernel = report.kernel;
      history.failed_kernel.clear();
      history.failure.clear();
      break;
    case Outcome::kFailed:
      history.failed_kernel = report.kernel;
      history.failure = report.log_tail.empty()
                            ? report.detail
                            : absl::StrCat(report.detail, "; log tail: ", report.log_tail);
      break;
  }
}

const char* OutcomeName(DriverInstallReport::Outcome outcome) {
  switch (outcome) {
    case DriverInstallReport::Outcome::kStarted: return "started";
    case DriverInstallReport::Outcome::kSucceeded: return "succeeded";
    case DriverInstallReport::Outcome::kFailed: return "failed";
  }
  return "unknown";
}

}  // namespace

absl::StatusOr<NodeView> NodeInventory::ReportDriverInstall(const DriverInstallReport& report) {
  const std::string& name = report.node;
  const std::string& kernel = report.kernel;
  const bool success = report.outcome == DriverInstallReport::Outcome::kSucceeded;
  const std::shared_ptr<const core::Catalog> current = parts_.mirror->CurrentCatalog();
  const core::Catalog& catalog = *current;
  // Since when the node has needed its driver, as this replica saw it: the
  // measured install time that time-to-GPU estimates learn from when the
  // report does not carry the job's own.
  std::optional<absl::Time> needed_since;
  {
    Mirror::Node mirrored = parts_.mirror->MirroredNode(name);
    if (mirrored.stored != nullptr &&
        mirrored.stored->driver_state == core::DriverState::kNeedsDriver &&
        mirrored.state_since && *mirrored.state_since != absl::InfinitePast()) {
      needed_since = *mirrored.state_since;
    }
  }
  store::StoredNode stored;
  bool sampled = false;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "recording driver install",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return UnknownNodeError(name);
    stored = **existing;
    if (stored.info.kernel_version != kernel) {
      return core::PreconditionError(
          core::ErrorReason::kStaleKernelReport, "STATE", absl::StrCat("node/", name),
          absl::StrCat("kernel_version: node ", name, " runs kernel ", stored.info.kernel_version,
                       ", not ", kernel, "; the report is for an old kernel"),
          {{"node", name}, {"kernel", kernel}, {"node_kernel", stored.info.kernel_version}});
    }
    if (success && report.took) {
      sampled = true;
      unit.timings().Record(store::TimingKind::kDriverInstall, stored.info.pool, kernel,
                            *report.took, report.cache);
    } else if (success && needed_since && stored.driver_state == core::DriverState::kNeedsDriver) {
      sampled = true;
      unit.timings().Record(store::TimingKind::kDriverInstall, stored.info.pool, kernel,
                            clock_() - *needed_since, report.cache);
    }
    RecordOutcome(report, stored.driver_history);
    EvaluateDriverInto(catalog, stored);
    stored.version = unit.nodes().Save(stored);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (sampled && timing_) timing_->Invalidate();
  if (absl::Status caught_up = CatchUp(); !caught_up.ok()) return caught_up;
  log::Info("driver install reported",
            {{"node", name}, {"kernel", kernel}, {"outcome", OutcomeName(report.outcome)},
             {"detail", report.detail}, {"cache", core::DriverCacheName(report.cache)},
             {"driver", core::DriverStateName(stored.driver_state)}});
  parts_.metrics->DriverInstallReported(stored.info.pool, OutcomeName(report.outcome),
                                  core::DriverCacheName(report.cache), report.took);
  DrainEverything();
  return ViewOf(stored);
}

absl::Status NodeInventory::DetectLostNodes() {
  std::vector<std::string> lost;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "detecting lost nodes",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    lost = unit.nodes().MarkLost(options_.node_lost_after);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (lost.empty()) return absl::OkStatus();
  for (const auto& node : lost) log::Warning("node lost: missed heartbeats", {{"node", node}});
  return CatchUp();
}

absl::StatusOr<NodeView> NodeInventory::ClearGpuHealth(const std::string& name,
                                                    const std::string& uuid) {
  store::StoredNode stored;
  bool was_out = false;
  absl::Status status = store::UnitOfWork::Run(*parts_.db, "clearing GPU health",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return UnknownNodeError(name);
    stored = **existing;
    core::Gpu* gpu = nullptr;
    for (core::Gpu& candidate : stored.info.gpus) {
      if (candidate.uuid == uuid) gpu = &candidate;
    }
    if (gpu == nullptr) {
      absl::Status missing = core::NotFoundError(
          core::ErrorReason::kGpuNotFound, "gpu", uuid,
          absl::StrCat("gpu_uuid: node ", name, " has no GPU ", uuid));
      core::ErrorDetails details = *core::DetailsOf(missing);
      details.metadata["node"] = name;
      return core::WithDetails(missing, details);
    }
    was_out = inventory::ClearGpuHealth(*gpu);
    if (!was_out) return absl::OkStatus();  // Nothing to write.
    stored.version = unit.nodes().Save(stored);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (absl::Status caught_up = CatchUp(); !caught_up.ok()) return caught_up;
  if (was_out) log::Info("GPU back in service: cleared by an admin", {{"node", name}, {"gpu", uuid}});
  if (was_out) DrainEverything();  // Capacity came back.
  return ViewOf(stored);
}

absl::flat_hash_map<std::string, NodeInventory::GpuHealthNow> NodeInventory::GpuHealthOn(
    const std::string& node) const {
  absl::flat_hash_map<std::string, GpuHealthNow> health;
  const Mirror::Node mirrored = parts_.mirror->MirroredNode(node);
  if (mirrored.stored == nullptr) return health;
  for (const core::Gpu& gpu : mirrored.stored->info.gpus) {
    health[gpu.uuid] = {gpu.healthy, gpu.health_reason};
  }
  return health;
}

bool NodeInventory::AnyNodeNeedsDriverIn(core::DriverInstall face) const {
  const std::shared_ptr<const replica::ClusterView> view = parts_.mirror->View();
  bool any = false;
  view->snapshot.ForEachNode([&](const placement::SnapshotNode& node) {
    if (any || node.info.gpus.empty()) return;
    const core::NodePool* pool = view->catalog->FindPool(node.info.pool);
    if (pool == nullptr || pool->driver_install != face) return;
    any = node.driver_state == core::DriverState::kNeedsDriver ||
          node.driver_state == core::DriverState::kInstallFailed;
  });
  return any;
}

}  // namespace wsched::inventory
