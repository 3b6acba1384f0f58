// The nodes the simulated cloud starts, and what a simulated agent does to
// one when it carries out a MIG re-layout (docs/placement.md "Layouts by
// demand"). Pure.
#ifndef WSCHED_SERVER_SIMULATE_SIM_NODE_H_
#define WSCHED_SERVER_SIMULATE_SIM_NODE_H_

#include <string>
#include <vector>

#include "server/core/mig_layout.h"
#include "server/core/node.h"
#include "server/core/pool.h"

namespace wsched::simulate {

// A node of the pool's shape: every GPU healthy and in an IOMMU group of its
// own (safe for VM classes); on a pool cut into MIG slices, every GPU in MIG
// mode with the pool's starting layout (core::StartingMigProfiles), as a
// node image that lays its GPUs out at boot would report them.
core::NodeInfo NodeOfShape(const std::string& name, const core::NodePool& pool);

// `gpu` cut anew into `layout` (profiles of its own table at legal starts):
// every slice a new instance with its own UUID (`cut` tells the cuts of one
// GPU apart) and capability device nodes, as the agent re-registers them.
void CutGpu(core::Gpu& gpu, const std::vector<core::MigLayoutSlice>& layout, int cut);

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_SIM_NODE_H_
