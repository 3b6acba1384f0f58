// The in-memory picture one replica decides on: nodes, what is free on them,
// and who holds which GPU.
//
// Ownership: a Snapshot behaves as a value (node infos, holds, indexes); a
// copy is independent of the original (a replica may copy it to decide
// off-lock, or keep one per test). Nodes, the name index and each pool's
// index are shared between copies and copied on write: a copy costs a
// pointer per node, and the first change of a node after a copy copies that
// node only, so readers can take a copy of a large fleet under the
// placement lock without holding placements up (NodesOnly). Pointers and
// references returned by lookups stay valid until the snapshot's next
// mutation.
//
// Not thread-safe and does no I/O: the caller holds the lock
// (docs/architecture.md "Where state lives"). It mirrors what PostgreSQL says; the database, not this
// class, is the arbiter of who holds a GPU. Hold() therefore accepts holds
// that overcommit CPU or memory (the node shrank, say) and only refuses what
// cannot be a consistent picture (unknown node or GPU, one GPU held twice).
#ifndef WSCHED_SERVER_PLACEMENT_SNAPSHOT_H_
#define WSCHED_SERVER_PLACEMENT_SNAPSHOT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/node.h"
#include "server/placement/capacity_index.h"
#include "server/placement/gpu_allocator.h"
#include "server/placement/iommu_units.h"
#include "server/placement/nvlink_peers.h"
#include "server/placement/resources.h"
#include "server/placement/slice_index.h"

namespace wsched::placement {

struct SnapshotGpu {
  std::string holder;  // Workspace id; empty when free.
  // From AnalyzeIommu when the node was added: the verdict of its group.
  bool passthrough_safe = false;
  std::string passthrough_reason;  // Shown to operators; empty when safe.
  int iommu_unit = -1;             // Into SnapshotNode::iommu_units; -1: IOMMU off.
  // From core/vfio_binding.h when the node was added: why the GPU cannot go
  // to a VM (its group is not all on vfio-pci) or to a container (it is on
  // vfio-pci). Empty when it can, or the agent does not report drivers.
  std::string vm_binding_problem;
  std::string container_binding_problem;
  // Parallel to the GPU's mig->instances (empty without MIG): the workspace
  // holding each slice; empty when free.
  std::vector<std::string> slice_holders;
  // Its MIG slices are being destroyed and made anew (relayout_plan.h):
  // none is handed out until the mark is lifted (Snapshot::SetRelayouts).
  // (A GPU in MIG mode is never handed out whole: core/vfio_binding.h.)
  bool relayout = false;
};

struct SnapshotNode {
  core::NodeInfo info;
  core::NodeState state = core::NodeState::kProvisioning;
  core::DriverState driver_state = core::DriverState::kNoPolicy;
  // When state or driver_state became what they are, if known: pending
  // reasons that name the node say for how long ("installing for 4m").
  absl::Time state_since = absl::InfinitePast();
  // What the last failed driver install said (its message and log tail);
  // the pending reason of a node in install_failed quotes it.
  std::string install_failure;
  Resources held;  // Sum of the holds on this node.
  Resources free;  // Allocatable minus held; negative when overcommitted.
  std::vector<SnapshotGpu> gpus;  // Parallel to info.gpus.
  std::vector<IommuUnit> iommu_units;
  NvlinkPeers nvlinks;       // From info.gpus' links, when the node was added.
  bool schedulable = false;  // Takes new workspaces (see NodeAcceptsWork).
  GpuCounts free_gpus{};     // Per GpuView; what the index was fed.
  FreeSlices free_slices;    // What the slice index was fed.

  // Position of the GPU with this index in info.gpus; -1 when absent.
  int PositionOf(int gpu_index) const;
  // The free GPUs in `view`, grouped the way they must be handed out.
  std::vector<GpuUnit> FreeUnits(GpuView view) const;
  // How many GPUs FreeUnits(view) holds, without building it (hot on hold/release).
  // `ignore_binding`: counting GPUs not bound as the view needs too (for the
  // pending reason that names the binding).
  int CountFreeGpus(GpuView view, bool ignore_binding = false) const;
  // Why the first free healthy GPU that `view` cannot take for its binding
  // is out; empty when none.
  std::string FirstBindingProblem(GpuView view) const;
  // Whether slice `k` of the GPU at `pos` can be handed to a container now:
  // the GPU healthy, in MIG mode and not held whole; the slice free, with a
  // compute instance spanning it and a MIG UUID to name it by.
  bool SliceUsable(int pos, size_t k) const;
  // The usable slices per profile (what the slice index is fed).
  FreeSlices CountFreeSlices() const;

 private:
  bool GpuUsable(int pos) const;
  bool BoundFor(int pos, GpuView view) const;
  bool UnitUsable(const IommuUnit& unit, GpuView view, bool ignore_binding = false) const;
};

using HeldSlice = core::HeldSlice;

struct HoldRecord {
  std::string workspace;
  std::string node;
  std::vector<int> gpu_indices;  // Sorted; empty for a slice.
  Resources resources;
  std::optional<HeldSlice> slice;
  friend bool operator==(const HoldRecord&, const HoldRecord&) = default;
};

class Snapshot {
 public:
  Snapshot();
  Snapshot(const Snapshot&) = default;
  Snapshot& operator=(const Snapshot&) = default;
  Snapshot(Snapshot&&) = default;
  Snapshot& operator=(Snapshot&&) = default;

  // Adds a node or replaces what is known about it (a heartbeat). Holds on
  // the node survive: GPU holders are re-applied by GPU index. Passthrough
  // safety is computed here, once per change of the node's info.
  // InvalidArgument for an empty name or duplicate GPU indices.
  // `install_failure`: what the node's last failed driver install said
  // (core::DriverHistory::failure), for the pending reason.
  absl::Status UpsertNode(const core::NodeInfo& info, core::NodeState state,
                          core::DriverState driver_state,
                          absl::Time state_since = absl::InfinitePast(),
                          const std::string& install_failure = "");
  // Forgets the node. Its holds stay recorded (Release still answers them)
  // and come back into force if the node is added again. False if unknown.
  bool RemoveNode(absl::string_view name);
  absl::Status SetNodeState(absl::string_view name, core::NodeState state);
  absl::Status SetDriverState(absl::string_view name, core::DriverState state);

  // Records that `workspace` holds `gpu_indices` and `resources` on `node`.
  // Idempotent: holding exactly the same again is OK and changes nothing.
  // NotFound: unknown node or GPU index. FailedPrecondition: a GPU is held by
  // another workspace, or this workspace already holds something else.
  absl::Status Hold(absl::string_view workspace, absl::string_view node,
                    std::vector<int> gpu_indices, const Resources& resources);
  // The same for one MIG slice: NotFound for an unknown node, GPU or GPU
  // instance; FailedPrecondition when the slice is held, or its GPU is held
  // whole, or the workspace already holds something else.
  absl::Status HoldSlice(absl::string_view workspace, absl::string_view node, HeldSlice slice,
                         const Resources& resources);
  // Hold or HoldSlice, as `record` says (a slice when record.slice is set).
  absl::Status HoldAsRecorded(HoldRecord record);
  // Frees what the workspace held, at once. Idempotent: nullopt when it held
  // nothing (already released or never held).
  std::optional<HoldRecord> Release(absl::string_view workspace);
  // Frees on its node what `hold` names, whether or not this snapshot
  // records the hold: a reader's copy (NodesOnly) has no hold records but
  // asks what stopping a workspace would free. NotFound for an unknown node.
  absl::Status FreeHeld(const HoldRecord& hold);

  // A copy without the hold records and the pools' indexes, for readers
  // that walk or look up nodes (each node's GPU holders and held resources
  // are there, and which nodes each pool has): FindHold, hold_count and
  // ReadyIndex answer nothing on it, and it is not for deciding or changing. It costs a
  // pointer per node, and the live snapshot's next change copies only the
  // nodes it changes; a full copy also copies every hold.
  Snapshot NodesOnly() const;
  // NodesOnly with the pools' indexes, for a reader that decides (a quote
  // runs the decision per class and pool): still no hold records, which
  // Decide does not read and which would cost a copy of every hold under
  // the placement lock (BM_CopyWithHolds). Sharing the indexes makes the
  // next placement in each pool copy that pool's index once
  // (BM_HoldReleaseWhileAViewIsHeld before views dropped them).
  Snapshot ForDeciding() const;

  // The GPUs under a MIG re-layout (node name -> GPU index; one per node, as
  // relayout_plan.h orders them), replacing the previous marks. Placement
  // keeps off them (SnapshotGpu::relayout). Like holds, a mark outlives
  // UpsertNode and RemoveNode, and an index the node does not report marks
  // nothing.
  void SetRelayouts(const absl::flat_hash_map<std::string, int>& marks);
  const absl::flat_hash_map<std::string, int>& relayouts() const { return relayouts_; }

  const SnapshotNode* FindNode(absl::string_view name) const;
  const HoldRecord* FindHold(absl::string_view workspace) const;
  size_t node_count() const { return ids_->size(); }
  // Visits every node (any state), in no particular order.
  void ForEachNode(const std::function<void(const SnapshotNode&)>& visit) const;
  // Visits the nodes of one pool (any state), in no particular order: a
  // reader that needs a few pools walks their nodes, not the fleet's.
  void ForEachNodeOf(absl::string_view pool,
                     const std::function<void(const SnapshotNode&)>& visit) const;
  size_t hold_count() const { return holds_.size(); }
  // The rules every change keeps: a GPU's holder holds it (its hold names
  // the node and the GPU), every GPU a hold names is held by it, and a
  // node's held resources are the sum of its holds and never below zero.
  // (Free capacity may be: a node that shrank keeps what it holds.) The
  // first rule broken, or OK. Walks every node: for tests and debug builds.
  absl::Status CheckInvariants() const;

  // Schedulable nodes of a pool by free capacity; nullptr when the pool has
  // no node at all. The ids it yields resolve with node().
  const CapacityIndex* ReadyIndex(absl::string_view pool) const;
  // Schedulable nodes of a pool with free usable slices; nullptr when the
  // pool has no node at all.
  const SliceIndex* ReadySlices(absl::string_view pool) const;
  // Nodes of the pool in any state.
  int PoolNodeCount(absl::string_view pool) const;
  const SnapshotNode& node(NodeId id) const { return *nodes_[id]; }

 private:
  struct PoolNodes {
    CapacityIndex ready;
    SliceIndex slices;
  };
  using NodeIds = absl::flat_hash_map<std::string, NodeId>;
  // The nodes of one pool, any state, in no order.
  using PoolMembers = std::vector<NodeId>;

  // The node, the name index or a pool's index, for changing: copied first
  // when another snapshot shares it.
  SnapshotNode& MutableNode(NodeId id);
  NodeIds& MutableIds();
  PoolNodes& MutablePool(const std::string& pool);
  // Files `id` under `pool`'s members, or takes it out (the pool's entries
  // go with its last node).
  void Join(const std::string& pool, NodeId id);
  void Leave(const std::string& pool, NodeId id);
  // Changes a known node's state, taking it out of and back into its
  // pool's index (NotFound for an unknown node).
  absl::Status Restate(absl::string_view name, const std::function<void(SnapshotNode&)>& change);
  void Unindex(NodeId id);
  // Recomputes free resources and GPU counts and files the node again.
  void Reindex(NodeId id);
  // Hold and HoldSlice, once the request is well formed.
  absl::Status AddHold(HoldRecord wanted);
  // Why `wanted` cannot be held on `node` (checked before anything changes).
  static absl::Status CheckHoldable(const HoldRecord& wanted, const SnapshotNode& node);
  // Marks (`held`) or clears the hold's workspace on what it names on the node.
  static void MarkHolder(const HoldRecord& hold, SnapshotNode& node, bool held);

  // By NodeId; null = free slot. Shared with copies (copy on write).
  std::vector<std::shared_ptr<SnapshotNode>> nodes_;
  std::vector<NodeId> free_ids_;
  std::shared_ptr<NodeIds> ids_;  // Shared with copies (copy on write).
  absl::flat_hash_map<std::string, std::shared_ptr<PoolNodes>> pools_;  // Each shared likewise.
  // Each shared likewise, and kept by NodesOnly: members change only when a
  // node comes, goes or moves pool, so sharing them costs placements nothing.
  absl::flat_hash_map<std::string, std::shared_ptr<PoolMembers>> members_;
  absl::flat_hash_map<std::string, HoldRecord> holds_;
  // Workspaces holding something on a node, so holds survive node re-adds.
  absl::flat_hash_map<std::string, absl::btree_set<std::string>> holds_by_node_;
  absl::flat_hash_map<std::string, int> relayouts_;  // SetRelayouts' marks.
};

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_SNAPSHOT_H_
