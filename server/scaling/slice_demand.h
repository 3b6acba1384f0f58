// Pending slice work in the scaler's terms: whole GPUs (docs/scaling.md
// "Slices"). The scaler packs GPUs, CPU and memory; a slice class's
// workspaces share a GPU, as many to one as a GPU of the pool has slices of
// its profile once cut.
#ifndef WSCHED_SERVER_SCALING_SLICE_DEMAND_H_
#define WSCHED_SERVER_SCALING_SLICE_DEMAND_H_

#include <cstdint>

#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/scaling/binpack.h"

namespace wsched::scaling {

// How many workspaces of slice class `cls` one GPU of a new node of `pool`
// holds: a fixed layout's slices of any of the class's profiles; by demand,
// the most slices of the first of the class's profiles the model's table
// can lay out on one GPU (7 of 1g, 3 of 2g, 2 of 3g); 0 for a pool that does
// not cut its GPUs (`whole`: a new node has no slices) or a model without a
// built-in table.
int SlicesPerGpu(const core::NodePool& pool, const core::WorkspaceClass& cls);

// `count` pending workspaces of `cls` as the scaler packs them: a GPU class
// as it is; a slice class as ceil(count / SlicesPerGpu) groups of one GPU
// with the CPU, memory and storage of SlicesPerGpu workspaces (the last one
// rounded up); a slice class no new node can hold as an item that never
// fits (the packing's never_fit).
PendingGroup PendingGroupOf(const core::NodePool& pool, const core::WorkspaceClass& cls,
                            int64_t count);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_SLICE_DEMAND_H_
