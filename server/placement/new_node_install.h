// Whether a node a pool starts will install its GPU driver before it takes
// work, and on which kernel: a workspace waiting for a scale-up waits that
// install too (time_to_gpu.h, docs/placement.md "Estimates that are
// checked").
//
// A node not started has no kernel yet; the pool's nodes stand in for it,
// since a pool's nodes boot one image:
//   - a GPU pool bound to vfio-pci, or without GPUs, installs nothing;
//   - with nodes up, the kernel most of them run (ties: the first node by
//     name's). Its nodes install when the driver policy has an entry for
//     that kernel and OS and the pool shows installs on it: one of its nodes
//     on that kernel needs, installs, failed or outgrew its driver, or an
//     install on it was measured. Nodes on it that all came up ready with
//     no install measured boot an image that has the driver;
//   - with none up, the kernel of the pool's most recent measured install,
//     when the driver policy still names it;
//   - with none up and no install measured, a policy that names any kernel
//     means an install of an unknown kernel (the default time stands in).
//
// Pure: no I/O, no clock reads. O(nodes of the pool).
#ifndef WSCHED_SERVER_PLACEMENT_NEW_NODE_INSTALL_H_
#define WSCHED_SERVER_PLACEMENT_NEW_NODE_INSTALL_H_

#include <optional>
#include <string>
#include <vector>

#include "server/core/driver_policy.h"
#include "server/core/pool.h"
#include "server/placement/snapshot.h"

namespace wsched::placement {

// nullopt: a new node of `pool` takes work once registered. Otherwise it
// installs first, on the kernel returned ("" when not known).
// `measured_kernels`: the kernels of the pool's measured installs, the most
// recent first.
std::optional<std::string> NewNodeInstallKernel(const core::NodePool& pool,
                                                const Snapshot& snapshot,
                                                const std::vector<core::DriverPolicyEntry>& policy,
                                                const std::vector<std::string>& measured_kernels);

// A node registered and not ready yet (provisioning) names its own kernel
// and driver state: nullopt when it takes work once ready, else the kernel
// it installs on first (its agent reported that it needs a driver, or is
// installing one, as a ready node then waits in the install's phase).
std::optional<std::string> ProvisioningNodeInstallKernel(const SnapshotNode& node);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_NEW_NODE_INSTALL_H_
