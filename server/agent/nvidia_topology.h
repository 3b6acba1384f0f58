// How the GPUs of a node reach each other, from `nvidia-smi topo -m`.
#ifndef WSCHED_SERVER_AGENT_NVIDIA_TOPOLOGY_H_
#define WSCHED_SERVER_AGENT_NVIDIA_TOPOLOGY_H_

#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/mig.h"

namespace wsched::agent {

// Output of `nvidia-smi topo -m`: a matrix whose header row names the
// columns (GPU0 GPU1 ... NIC0 ... CPU Affinity NUMA Affinity GPU NUMA ID)
// and whose rows start with their own name, cells separated by tabs (spaces
// are accepted too). Only the GPU block is read: NIC rows and columns, the
// affinity columns, the Legend and the NIC Legend are skipped, as is the
// underline escape nvidia-smi puts around the header on a terminal.
//
// Returns, per nvidia-smi GPU index, its links to every other GPU in peer
// order (`peer` is the nvidia-smi index too; the GPU itself is left out).
// Cells: NV# (kNvlink, # bonded links), PIX, PXB, PHB, NODE, SYS, and X on
// the diagonal. A GPU block that is not square, names a GPU twice or out of
// order, has a cell it does not know, or says something different from
// each side of a pair fails the parse, naming the cell.
absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> ParseNvidiaSmiTopology(
    absl::string_view text);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NVIDIA_TOPOLOGY_H_
