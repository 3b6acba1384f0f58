// `wschedctl node get`: how a node's GPUs are linked and sliced, in lines an
// operator reads next to `nvidia-smi topo -m` and `nvidia-smi mig -lgi`.
#ifndef WSCHED_SERVER_CLI_GPU_TOPOLOGY_TEXT_H_
#define WSCHED_SERVER_CLI_GPU_TOPOLOGY_TEXT_H_

#include <string>
#include <vector>

#include "wsched/v1/inventory.pb.h"

namespace wsched::cli {

// One line per GPU with links: "gpu 0 links: NV4 to 1; SYS to 2, 3". Empty
// when the node reports none.
std::vector<std::string> GpuLinkLines(const v1::NodeInfo& node);
// One line per GPU with MIG reported: "gpu 2 mig on: 3g.71gb 0:4 (MIG-aa11,
// cdi wsched.io/gpu=MIG-aa11), 1g.18gb 6:1; slots 4-5, 7 free" or "gpu 3 mig
// off (on after reset)". A slice's CDI device is shown where it has one.
std::vector<std::string> GpuMigLines(const v1::NodeInfo& node);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_GPU_TOPOLOGY_TEXT_H_
