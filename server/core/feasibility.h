// "Could this pool ever hold one workspace of this class, and if not, why?"
//
// The one rule behind every "can never fit" answer: catalog validation ("no
// pool can ever hold this class"), placement's Never and its pool plan, and
// the NO_POOL pending reason. Whether the class fits *now* (free GPUs, ready
// nodes, passthrough-safe IOMMU groups) is the placement engine's business:
// future nodes may differ from today's, the pool's shape may not.
#ifndef WSCHED_SERVER_CORE_FEASIBILITY_H_
#define WSCHED_SERVER_CORE_FEASIBILITY_H_

#include <optional>
#include <string>
#include <vector>

#include "server/core/pool.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

// The largest GPU count one workspace can have: the GPU allocator's subset
// sums are sized for it. Above every pool the catalog allows (16 GPUs per
// node), so only catalogs that skipped validation ever reach it.
inline constexpr int kMaxGpusPerWorkspace = 128;

// The first rule a pool breaks for a class, in the order they are checked.
enum class InfeasibleReason {
  kPoolCannotGrow,     // max_size <= 0: the pool never has a node.
  kSelectorMismatch,   // the class's pool_selector is not among the pool's labels
  kNoGpus,             // a GPU class, a pool without GPUs
  kGpuModel,           // the pool's GPU model is not among the class's models
  kTooManyGpus,        // more GPUs than one node has (a workspace's GPUs share a node)
  kGpuBinding,         // a container GPU class, a pool whose GPUs are bound to vfio-pci
  kMigProfile,         // a slice class, a pool whose GPU model has none of its profiles
  kMigLayout,          // a whole-GPU class, a pool whose GPUs are cut into MIG slices
  kCpuClassOnGpuPool,  // a CPU class whose pool_selector does not ask for GPU pools
  kCpu,                // one node's CPU < the class's CPU request
  kMemory,
  kEphemeralStorage,
  kDisk,
};

// Stable snake_case names ("pool_cannot_grow") for logs and tests.
const char* InfeasibleReasonName(InfeasibleReason reason);

// Feasible (no reason), or the first rule broken and a line for people that
// names the quantities ("node has 4 GPUs, class needs 8"). The message does
// not name the pool: callers put it in front.
struct PoolVerdict {
  std::optional<InfeasibleReason> reason;
  std::string message;  // Empty when feasible.

  bool feasible() const { return !reason.has_value(); }
  friend bool operator==(const PoolVerdict&, const PoolVerdict&) = default;
};

// Whether one node of `pool` could ever hold one workspace of `cls`.
// `catalog_pools` are all the catalog's pools (`pool` among them): whether a
// CPU class may use a GPU pool depends on the CPU pools its selector matches.
//
// The rules, in order:
//  1. max_size > 0 (a pool that may not grow never has a node to offer);
//  2. every pool_selector label is on the pool;
//  3. a GPU class needs a GPU pool whose gpu_model is in `gpu.models` (any
//     when empty) with at least `gpu.count` GPUs per node, and never more
//     than kMaxGpusPerWorkspace; a container GPU class never uses a pool with
//     gpu_binding vfio (its GPUs are bound to vfio-pci, for VMs only), and
//     no whole-GPU class uses a pool whose mig.layout is not whole (its
//     GPUs are cut into slices, and a GPU in MIG mode is never handed out
//     whole); a slice class needs a GPU pool of one of its models, not
//     bound to vfio-pci, whose model has one of its profiles (any model
//     without a built-in table may have);
//  4. a CPU class uses a GPU pool only when its pool_selector is non-empty
//     and matches no CPU pool: it named GPU pools on purpose. A selector
//     that happens to match both kinds keeps CPU work on the CPU pools, so
//     GPU nodes stay free for GPU work and can scale to zero;
//  5. the node's CPU, memory, ephemeral storage and disk are at least the
//     class's request. A zero in the pool's shape means "not stated" and
//     rules nothing out (the catalog requires CPU and memory, so only
//     storage is ever left out by a validated catalog).
PoolVerdict CanEverHold(const WorkspaceClass& cls, const NodePool& pool,
                        const std::vector<NodePool>& catalog_pools);

// The reason alone, without building the message: for the placement hot
// path, which only needs to know which pools to try.
std::optional<InfeasibleReason> FirstInfeasibility(const WorkspaceClass& cls, const NodePool& pool,
                                                   const std::vector<NodePool>& catalog_pools);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_FEASIBILITY_H_
