#include "server/placement/snapshot.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/vfio_binding.h"
#include "server/placement/filters.h"

namespace wsched::placement {
namespace {

// Position of the GPU instance `gpu_instance` among the GPU's slices; -1.
int SlicePosition(const core::Gpu& gpu, int gpu_instance) {
  if (!gpu.mig) return -1;
  const std::vector<core::MigInstance>& slices = gpu.mig->instances;
  for (size_t k = 0; k < slices.size(); ++k) {
    if (slices[k].gpu_instance == gpu_instance) return static_cast<int>(k);
  }
  return -1;
}

bool SliceHeldBy(const SnapshotNode& node, const HeldSlice& slice, const std::string& workspace) {
  const int pos = node.PositionOf(slice.gpu_index);
  if (pos < 0) return false;
  const int k = SlicePosition(node.info.gpus[pos], slice.gpu_instance);
  return k >= 0 && node.gpus[pos].slice_holders[k] == workspace;
}

// Every slice holder on the node holds that slice by its hold.
absl::Status CheckSliceHolders(const SnapshotNode& node,
                               const absl::flat_hash_map<std::string, HoldRecord>& holds) {
  for (size_t pos = 0; pos < node.gpus.size(); ++pos) {
    const std::vector<std::string>& holders = node.gpus[pos].slice_holders;
    for (size_t k = 0; k < holders.size(); ++k) {
      if (holders[k].empty()) continue;
      const core::Gpu& gpu = node.info.gpus[pos];
      const HeldSlice here{gpu.index, gpu.mig->instances[k].gpu_instance};
      auto hold = holds.find(holders[k]);
      if (hold == holds.end() || hold->second.node != node.info.name ||
          hold->second.slice != here) {
        return absl::InternalError(absl::StrCat(
            "slice gi", here.gpu_instance, " of GPU ", gpu.index, " on node ", node.info.name,
            " names holder ", holders[k], ", whose hold does not name it"));
      }
    }
  }
  return absl::OkStatus();
}

std::string Describe(const HoldRecord& hold) {
  if (hold.slice) {
    return absl::StrCat("slice gi", hold.slice->gpu_instance, " of GPU ", hold.slice->gpu_index);
  }
  return absl::StrCat("GPUs [", absl::StrJoin(hold.gpu_indices, ","), "]");
}

}  // namespace

int SnapshotNode::PositionOf(int gpu_index) const {
  for (size_t pos = 0; pos < info.gpus.size(); ++pos) {
    if (info.gpus[pos].index == gpu_index) return static_cast<int>(pos);
  }
  return -1;
}

bool SnapshotNode::GpuUsable(int pos) const {
  return gpus[pos].holder.empty() && info.gpus[pos].healthy;
}

bool SnapshotNode::BoundFor(int pos, GpuView view) const {
  return view == GpuView::kContainer ? gpus[pos].container_binding_problem.empty()
                                     : gpus[pos].vm_binding_problem.empty();
}

bool SnapshotNode::UnitUsable(const IommuUnit& unit, GpuView view, bool ignore_binding) const {
  // VMs take whole groups: every GPU in it free and healthy, bound to
  // vfio-pci with its group, and safe unless the pool allows unsafe groups.
  return std::all_of(unit.positions.begin(), unit.positions.end(), [&](int pos) {
    return GpuUsable(pos) && (view == GpuView::kVmAny || gpus[pos].passthrough_safe) &&
           (ignore_binding || BoundFor(pos, view));
  });
}

std::vector<GpuUnit> SnapshotNode::FreeUnits(GpuView view) const {
  std::vector<GpuUnit> units;
  if (view == GpuView::kContainer) {
    // Containers share nothing through the IOMMU: each GPU goes on its own.
    for (size_t pos = 0; pos < info.gpus.size(); ++pos) {
      if (GpuUsable(pos) && BoundFor(pos, view)) {
        units.push_back({{info.gpus[pos].index}, info.gpus[pos].numa_node});
      }
    }
    return units;
  }
  for (const IommuUnit& unit : iommu_units) {
    if (!UnitUsable(unit, view)) continue;
    GpuUnit free_unit;
    free_unit.numa_node = info.gpus[unit.positions.front()].numa_node;
    for (int pos : unit.positions) free_unit.indices.push_back(info.gpus[pos].index);
    units.push_back(std::move(free_unit));
  }
  return units;
}

int SnapshotNode::CountFreeGpus(GpuView view, bool ignore_binding) const {
  int count = 0;
  if (view == GpuView::kContainer) {
    for (size_t pos = 0; pos < info.gpus.size(); ++pos) {
      count += GpuUsable(pos) && (ignore_binding || BoundFor(pos, view)) ? 1 : 0;
    }
    return count;
  }
  for (const IommuUnit& unit : iommu_units) {
    if (UnitUsable(unit, view, ignore_binding)) count += static_cast<int>(unit.positions.size());
  }
  return count;
}

std::string SnapshotNode::FirstBindingProblem(GpuView view) const {
  for (size_t pos = 0; pos < info.gpus.size(); ++pos) {
    if (!GpuUsable(pos) || BoundFor(pos, view)) continue;
    return view == GpuView::kContainer ? gpus[pos].container_binding_problem
                                       : gpus[pos].vm_binding_problem;
  }
  return "";
}

bool SnapshotNode::SliceUsable(int pos, size_t k) const {
  const core::Gpu& gpu = info.gpus[pos];
  if (!gpu.healthy || !gpus[pos].holder.empty() || gpus[pos].relayout || !gpu.mig ||
      !gpu.mig->enabled) {
    return false;
  }
  const core::MigInstance& slice = gpu.mig->instances[k];
  return gpus[pos].slice_holders[k].empty() && slice.compute_instance >= 0 && !slice.uuid.empty();
}

FreeSlices SnapshotNode::CountFreeSlices() const {
  FreeSlices free;
  for (size_t pos = 0; pos < info.gpus.size(); ++pos) {
    if (!info.gpus[pos].mig) continue;
    const std::vector<core::MigInstance>& slices = info.gpus[pos].mig->instances;
    for (size_t k = 0; k < slices.size(); ++k) {
      if (!SliceUsable(static_cast<int>(pos), k)) continue;
      // A node has a handful of profiles: a linear look-up.
      auto it = std::find_if(free.begin(), free.end(),
                             [&](const auto& entry) { return entry.first == slices[k].profile; });
      if (it == free.end()) {
        free.emplace_back(slices[k].profile, 1);
      } else {
        ++it->second;
      }
    }
  }
  return free;
}

Snapshot::Snapshot() : ids_(std::make_shared<NodeIds>()) {}

Snapshot Snapshot::NodesOnly() const {
  Snapshot copy;
  copy.nodes_ = nodes_;
  copy.free_ids_ = free_ids_;
  copy.ids_ = ids_;
  copy.members_ = members_;
  copy.relayouts_ = relayouts_;
  // Not the pools' indexes: no reader decides, and an index shared with a
  // reader's copy would be copied whole, under the placement lock, by the
  // next placement in its pool (BM_HoldReleaseWhileAViewIsHeld).
  return copy;
}

Snapshot Snapshot::ForDeciding() const {
  Snapshot copy = NodesOnly();
  copy.pools_ = pools_;
  return copy;
}

SnapshotNode& Snapshot::MutableNode(NodeId id) {
  std::shared_ptr<SnapshotNode>& node = nodes_[id];
  // Another snapshot that shares the node holds a reference for as long as
  // it can read it, so a count of one means nobody else can.
  if (node.use_count() > 1) node = std::make_shared<SnapshotNode>(*node);
  return *node;
}

Snapshot::NodeIds& Snapshot::MutableIds() {
  if (ids_.use_count() > 1) ids_ = std::make_shared<NodeIds>(*ids_);
  return *ids_;
}

Snapshot::PoolNodes& Snapshot::MutablePool(const std::string& pool) {
  std::shared_ptr<PoolNodes>& nodes = pools_[pool];
  if (nodes == nullptr) {
    nodes = std::make_shared<PoolNodes>();
  } else if (nodes.use_count() > 1) {
    nodes = std::make_shared<PoolNodes>(*nodes);
  }
  return *nodes;
}

void Snapshot::Join(const std::string& pool, NodeId id) {
  std::shared_ptr<PoolMembers>& members = members_[pool];
  if (members == nullptr) {
    members = std::make_shared<PoolMembers>();
  } else if (members.use_count() > 1) {
    members = std::make_shared<PoolMembers>(*members);
  }
  members->push_back(id);
}

void Snapshot::Leave(const std::string& pool, NodeId id) {
  auto it = members_.find(pool);
  if (it == members_.end()) return;
  if (it->second->size() == 1 && it->second->front() == id) {
    members_.erase(it);
    pools_.erase(pool);
    return;
  }
  if (it->second.use_count() > 1) it->second = std::make_shared<PoolMembers>(*it->second);
  PoolMembers& members = *it->second;
  auto at = std::find(members.begin(), members.end(), id);
  if (at == members.end()) return;
  *at = members.back();
  members.pop_back();
}

absl::Status Snapshot::UpsertNode(const core::NodeInfo& info, core::NodeState state,
                                  core::DriverState driver_state, absl::Time state_since,
                                  const std::string& install_failure) {
  if (info.name.empty()) return absl::InvalidArgumentError("node name is empty");
  absl::flat_hash_set<int> seen;
  for (const core::Gpu& gpu : info.gpus) {
    if (!seen.insert(gpu.index).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", info.name, " reports GPU index ", gpu.index, " twice"));
    }
  }

  NodeId id;
  auto it = ids_->find(info.name);
  if (it != ids_->end()) {
    id = it->second;
    const SnapshotNode& existing = *nodes_[id];
    // Heartbeats repeat themselves; skip the IOMMU analysis and re-indexing.
    if (existing.info == info && existing.state == state && existing.driver_state == driver_state &&
        existing.state_since == state_since && existing.install_failure == install_failure) {
      return absl::OkStatus();
    }
    Unindex(id);
    if (existing.info.pool != info.pool) {
      Leave(existing.info.pool, id);
      Join(info.pool, id);
    }
  } else {
    if (!free_ids_.empty()) {
      id = free_ids_.back();
      free_ids_.pop_back();
    } else {
      id = static_cast<NodeId>(nodes_.size());
      nodes_.emplace_back();
    }
    MutableIds().emplace(info.name, id);
    Join(info.pool, id);
  }

  SnapshotNode node;
  node.info = info;
  node.state = state;
  node.driver_state = driver_state;
  node.state_since = state_since;
  node.install_failure = install_failure;
  NodeIommu iommu = AnalyzeIommu(info);
  node.iommu_units = std::move(iommu.units);
  node.nvlinks = NvlinkPeers::Of(info.gpus);
  node.gpus.resize(info.gpus.size());
  for (size_t pos = 0; pos < info.gpus.size(); ++pos) {
    node.gpus[pos].passthrough_safe = iommu.gpus[pos].safe;
    node.gpus[pos].passthrough_reason = std::move(iommu.gpus[pos].reason);
    node.gpus[pos].iommu_unit = iommu.gpus[pos].unit;
    node.gpus[pos].vm_binding_problem = core::VmBindingProblem(info.gpus[pos]).value_or("");
    node.gpus[pos].container_binding_problem =
        core::ContainerBindingProblem(info.gpus[pos]).value_or("");
    if (info.gpus[pos].mig)
      node.gpus[pos].slice_holders.resize(info.gpus[pos].mig->instances.size());
  }
  // Holds are facts from the store; lay them onto the new picture. They are
  // disjoint (Hold checked that), so nothing can collide here. A GPU index
  // the node no longer reports simply has no slot to mark.
  if (auto held = holds_by_node_.find(info.name); held != holds_by_node_.end()) {
    for (const std::string& workspace : held->second) {
      const HoldRecord& hold = holds_.at(workspace);
      node.held += hold.resources;
      MarkHolder(hold, node, /*held=*/true);
    }
  }
  if (auto marked = relayouts_.find(info.name); marked != relayouts_.end()) {
    if (const int pos = node.PositionOf(marked->second); pos >= 0) node.gpus[pos].relayout = true;
  }
  nodes_[id] = std::make_shared<SnapshotNode>(std::move(node));
  Reindex(id);
  return absl::OkStatus();
}

bool Snapshot::RemoveNode(absl::string_view name) {
  auto it = ids_->find(name);
  if (it == ids_->end()) return false;
  NodeId id = it->second;
  Unindex(id);
  Leave(nodes_[id]->info.pool, id);
  nodes_[id].reset();
  free_ids_.push_back(id);
  MutableIds().erase(name);
  return true;
}

absl::Status Snapshot::SetNodeState(absl::string_view name, core::NodeState state) {
  return Restate(name, [state](SnapshotNode& node) { node.state = state; });
}

absl::Status Snapshot::SetDriverState(absl::string_view name, core::DriverState state) {
  return Restate(name, [state](SnapshotNode& node) { node.driver_state = state; });
}

absl::Status Snapshot::Restate(absl::string_view name,
                               const std::function<void(SnapshotNode&)>& change) {
  auto it = ids_->find(name);
  if (it == ids_->end()) return absl::NotFoundError(absl::StrCat("unknown node ", name));
  const NodeId id = it->second;
  Unindex(id);
  change(MutableNode(id));
  Reindex(id);
  return absl::OkStatus();
}

void Snapshot::SetRelayouts(const absl::flat_hash_map<std::string, int>& marks) {
  // Only the nodes whose mark changes are re-indexed.
  absl::flat_hash_set<std::string> changed;
  for (const auto& [node, gpu] : relayouts_) {
    auto now = marks.find(node);
    if (now == marks.end() || now->second != gpu) changed.insert(node);
  }
  for (const auto& [node, gpu] : marks) {
    auto before = relayouts_.find(node);
    if (before == relayouts_.end() || before->second != gpu) changed.insert(node);
  }
  relayouts_ = marks;
  for (const std::string& name : changed) {
    auto marked = marks.find(name);
    (void)Restate(name, [&](SnapshotNode& node) {
      for (size_t pos = 0; pos < node.gpus.size(); ++pos) {
        node.gpus[pos].relayout =
            marked != marks.end() && node.info.gpus[pos].index == marked->second;
      }
    });  // NotFound: a node not here (yet) takes its mark when it comes.
  }
}

absl::Status Snapshot::Hold(absl::string_view workspace, absl::string_view node_name,
                            std::vector<int> gpu_indices, const Resources& resources) {
  if (workspace.empty()) return absl::InvalidArgumentError("workspace id is empty");
  std::sort(gpu_indices.begin(), gpu_indices.end());
  if (std::adjacent_find(gpu_indices.begin(), gpu_indices.end()) != gpu_indices.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workspace ", workspace, ": GPU indices repeat: ",
                     absl::StrJoin(gpu_indices, ",")));
  }
  return AddHold(HoldRecord{std::string(workspace), std::string(node_name), std::move(gpu_indices),
                            resources, std::nullopt});
}

absl::Status Snapshot::HoldSlice(absl::string_view workspace, absl::string_view node_name,
                                 HeldSlice slice, const Resources& resources) {
  if (workspace.empty()) return absl::InvalidArgumentError("workspace id is empty");
  return AddHold(HoldRecord{std::string(workspace), std::string(node_name), {}, resources, slice});
}

absl::Status Snapshot::HoldAsRecorded(HoldRecord record) {
  if (record.slice) {
    return HoldSlice(record.workspace, record.node, *record.slice, record.resources);
  }
  return Hold(record.workspace, record.node, std::move(record.gpu_indices), record.resources);
}

absl::Status Snapshot::AddHold(HoldRecord wanted) {
  if (const HoldRecord* existing = FindHold(wanted.workspace)) {
    if (*existing == wanted) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("workspace ", wanted.workspace, " already holds ", Describe(*existing),
                     " on node ", existing->node, "; release it first"));
  }
  auto id_it = ids_->find(wanted.node);
  if (id_it == ids_->end()) return absl::NotFoundError(absl::StrCat("unknown node ", wanted.node));
  const NodeId id = id_it->second;
  if (absl::Status holdable = CheckHoldable(wanted, *nodes_[id]); !holdable.ok()) return holdable;

  Unindex(id);
  SnapshotNode& changed = MutableNode(id);
  MarkHolder(wanted, changed, /*held=*/true);
  changed.held += wanted.resources;
  Reindex(id);
  holds_by_node_[wanted.node].insert(wanted.workspace);
  holds_.emplace(wanted.workspace, std::move(wanted));
  return absl::OkStatus();
}

absl::Status Snapshot::CheckHoldable(const HoldRecord& wanted, const SnapshotNode& node) {
  const std::string& name = node.info.name;
  for (int index : wanted.gpu_indices) {
    const int pos = node.PositionOf(index);
    if (pos < 0) return absl::NotFoundError(absl::StrCat("node ", name, " has no GPU ", index));
    if (!node.gpus[pos].holder.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", index, " on node ", name, " is held by workspace ", node.gpus[pos].holder));
    }
    for (const std::string& holder : node.gpus[pos].slice_holders) {
      if (holder.empty()) continue;
      return absl::FailedPreconditionError(
          absl::StrCat("GPU ", index, " on node ", name, " has a slice held by ", holder));
    }
  }
  if (!wanted.slice) return absl::OkStatus();
  const HeldSlice& slice = *wanted.slice;
  const int pos = node.PositionOf(slice.gpu_index);
  if (pos < 0)
    return absl::NotFoundError(absl::StrCat("node ", name, " has no GPU ", slice.gpu_index));
  const int k = SlicePosition(node.info.gpus[pos], slice.gpu_instance);
  if (k < 0) {
    return absl::NotFoundError(absl::StrCat("GPU ", slice.gpu_index, " on node ", name,
                                            " has no GPU instance ", slice.gpu_instance));
  }
  if (!node.gpus[pos].holder.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("GPU ", slice.gpu_index, " on node ", name,
                                                      " is held whole by workspace ",
                                                      node.gpus[pos].holder));
  }
  if (const std::string& holder = node.gpus[pos].slice_holders[k]; !holder.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(wanted), " on node ", name, " is held by workspace ", holder));
  }
  return absl::OkStatus();
}

void Snapshot::MarkHolder(const HoldRecord& hold, SnapshotNode& node, bool held) {
  auto mark = [&](std::string& holder) {
    if (held) {
      holder = hold.workspace;
    } else if (holder == hold.workspace) {
      holder.clear();
    }
  };
  for (int index : hold.gpu_indices) {
    if (int pos = node.PositionOf(index); pos >= 0) mark(node.gpus[pos].holder);
  }
  if (!hold.slice) return;
  // A GPU or instance the node no longer reports simply has no slot to mark.
  const int pos = node.PositionOf(hold.slice->gpu_index);
  if (pos < 0) return;
  const int k = SlicePosition(node.info.gpus[pos], hold.slice->gpu_instance);
  if (k >= 0) mark(node.gpus[pos].slice_holders[k]);
}

std::optional<HoldRecord> Snapshot::Release(absl::string_view workspace) {
  auto it = holds_.find(workspace);
  if (it == holds_.end()) return std::nullopt;
  HoldRecord hold = std::move(it->second);
  holds_.erase(it);

  if (auto by_node = holds_by_node_.find(hold.node); by_node != holds_by_node_.end()) {
    by_node->second.erase(hold.workspace);
    if (by_node->second.empty()) holds_by_node_.erase(by_node);
  }

  if (auto id_it = ids_->find(hold.node); id_it != ids_->end()) {
    const NodeId id = id_it->second;
    Unindex(id);
    SnapshotNode& node = MutableNode(id);
    MarkHolder(hold, node, /*held=*/false);
    node.held -= hold.resources;
    Reindex(id);
  }
  return hold;
}

absl::Status Snapshot::FreeHeld(const HoldRecord& hold) {
  if (holds_.contains(hold.workspace)) {
    Release(hold.workspace);
    return absl::OkStatus();
  }
  return Restate(hold.node, [&hold](SnapshotNode& node) {
    MarkHolder(hold, node, /*held=*/false);
    node.held -= hold.resources;
  });
}

const SnapshotNode* Snapshot::FindNode(absl::string_view name) const {
  auto it = ids_->find(name);
  return it == ids_->end() ? nullptr : nodes_[it->second].get();
}

const HoldRecord* Snapshot::FindHold(absl::string_view workspace) const {
  auto it = holds_.find(workspace);
  return it == holds_.end() ? nullptr : &it->second;
}

const CapacityIndex* Snapshot::ReadyIndex(absl::string_view pool) const {
  auto it = pools_.find(pool);
  return it == pools_.end() ? nullptr : &it->second->ready;
}

const SliceIndex* Snapshot::ReadySlices(absl::string_view pool) const {
  auto it = pools_.find(pool);
  return it == pools_.end() ? nullptr : &it->second->slices;
}

int Snapshot::PoolNodeCount(absl::string_view pool) const {
  auto it = members_.find(pool);
  return it == members_.end() ? 0 : static_cast<int>(it->second->size());
}

void Snapshot::Unindex(NodeId id) {
  if (!nodes_[id]->schedulable) return;
  SnapshotNode& node = MutableNode(id);
  PoolNodes& pool = MutablePool(node.info.pool);
  pool.ready.Erase(id, node.free_gpus, node.free.cpu_millis);
  if (!node.free_slices.empty()) pool.slices.Erase(id, node.free_slices, node.free.cpu_millis);
  node.schedulable = false;
}

void Snapshot::Reindex(NodeId id) {
  SnapshotNode& node = MutableNode(id);
  node.free = AllocatableOf(node.info) - node.held;
  for (int v = 0; v < kGpuViews; ++v) node.free_gpus[v] = node.CountFreeGpus(static_cast<GpuView>(v));
  node.free_slices = node.CountFreeSlices();
  node.schedulable = NodeAcceptsWork(node.state, node.driver_state, !node.info.gpus.empty());
  if (node.schedulable) {
    PoolNodes& pool = MutablePool(node.info.pool);
    pool.ready.Insert(id, node.free_gpus, node.free.cpu_millis);
    if (!node.free_slices.empty()) pool.slices.Insert(id, node.free_slices, node.free.cpu_millis);
  }
}

void Snapshot::ForEachNode(const std::function<void(const SnapshotNode&)>& visit) const {
  for (const auto& node : nodes_) {
    if (node != nullptr) visit(*node);
  }
}

void Snapshot::ForEachNodeOf(absl::string_view pool,
                             const std::function<void(const SnapshotNode&)>& visit) const {
  auto it = members_.find(pool);
  if (it == members_.end()) return;
  for (const NodeId id : *it->second) visit(*nodes_[id]);
}

absl::Status Snapshot::CheckInvariants() const {
  absl::flat_hash_map<std::string, Resources> held_by_node;
  for (const auto& [workspace, hold] : holds_) {
    const SnapshotNode* node = FindNode(hold.node);
    if (node == nullptr) continue;  // Kept for a node that comes back (holds_by_node_).
    held_by_node[hold.node] += hold.resources;
    if (hold.slice && !SliceHeldBy(*node, *hold.slice, workspace)) {
      return absl::InternalError(absl::StrCat("hold of ", workspace, " names ", Describe(hold),
                                              " on node ", hold.node, ", which it does not hold"));
    }
    for (int index : hold.gpu_indices) {
      const int pos = node->PositionOf(index);
      if (pos < 0 || node->gpus[pos].holder != workspace) {
        return absl::InternalError(absl::StrCat("hold of ", workspace, " names GPU ", index, " on node ",
                                                hold.node, ", which it does not hold"));
      }
    }
  }
  for (const auto& node : nodes_) {
    if (node == nullptr) continue;
    const std::string& name = node->info.name;
    for (size_t pos = 0; pos < node->gpus.size(); ++pos) {
      const std::string& holder = node->gpus[pos].holder;
      if (holder.empty()) continue;
      const HoldRecord* hold = FindHold(holder);
      const int index = pos < node->info.gpus.size() ? node->info.gpus[pos].index : -1;
      if (hold == nullptr || hold->node != name ||
          !std::binary_search(hold->gpu_indices.begin(), hold->gpu_indices.end(), index)) {
        return absl::InternalError(absl::StrCat("GPU ", index, " on node ", name, " names holder ",
                                                holder, ", whose hold does not name it"));
      }
    }
    if (absl::Status slices = CheckSliceHolders(*node, holds_); !slices.ok()) return slices;
    const Resources& held = node->held;
    if (held.cpu_millis < 0 || held.memory_bytes < 0 || held.ephemeral_storage_bytes < 0 ||
        held.disk_bytes < 0) {
      return absl::InternalError(absl::StrCat("node ", name, " holds less than nothing"));
    }
    if (!(held == held_by_node[name])) {
      return absl::InternalError(absl::StrCat("node ", name, " holds ", held.cpu_millis,
                                              " mCPU, but its holds add up to ",
                                              held_by_node[name].cpu_millis));
    }
  }
  return absl::OkStatus();
}

}  // namespace wsched::placement
