// Multi-Instance GPU: how a GPU is cut into slices, as its agent reports it.
//
// An A100, H100 or H200 in MIG mode divides its memory into 8 slots and its
// compute into 7 slices. A GPU instance takes a profile ("3g.71gb": 3 compute
// slices, 71 GB) at one of the placements the GPU allows for that profile
// (start slot and size); a compute instance inside it is what a process
// uses. wsched hands out a GPU instance with one compute instance that spans
// it: a "slice" (docs/catalog.md "Slices of a GPU").
#ifndef WSCHED_SERVER_CORE_MIG_H_
#define WSCHED_SERVER_CORE_MIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

// Memory slots of a MIG-capable GPU; placements are (start, size) in them.
inline constexpr int kMigMemorySlots = 8;
// Compute slices of a whole GPU: a profile's share of it is compute / 7.
inline constexpr int kMigComputeSlices = 7;

// A GPU instance profile as the GPU reports it (`nvidia-smi mig -lgip`,
// `-lgipp`).
struct MigProfile {
  std::string name;        // "1g.18gb", without the "MIG " prefix.
  int id = -1;             // The GPU instance profile ID (19 for 1g.*).
  int compute_slices = 0;  // The "1" of 1g.
  int64_t memory_bytes = 0;
  int size = 0;             // Memory slots one instance takes (placement size).
  std::vector<int> starts;  // Legal placement starts, ascending.
  friend bool operator==(const MigProfile&, const MigProfile&) = default;
};

// A GPU instance that exists on the GPU, with the compute instance that
// spans it; what a workspace holding a slice uses.
struct MigInstance {
  std::string profile;  // "1g.18gb"
  int gpu_instance = -1;
  // -1: no compute instance spans the GPU instance (none, several, or one
  // over part of it); its slots are taken but nobody can be handed it.
  int compute_instance = -1;
  int start = 0;  // Placement start slot.
  int size = 0;   // Placement size in slots.
  std::string uuid;  // "MIG-..."; empty when nvidia-smi did not name it.
  // /dev/nvidia-caps/nvidia-cap<minor> for the GPU instance and the compute
  // instance (from /proc/driver/nvidia/capabilities/gpu<N>/mig/...).
  std::optional<DeviceNode> gi_access;
  std::optional<DeviceNode> ci_access;
  // The qualified CDI name the node's spec gives the slice; empty without one.
  std::string cdi_device;
  friend bool operator==(const MigInstance&, const MigInstance&) = default;
};

// One MIG slice of a node: the GPU instance `gpu_instance` of the GPU with
// index `gpu_index` (its compute instance comes with it).
struct HeldSlice {
  int gpu_index = -1;
  int gpu_instance = -1;
  friend bool operator==(const HeldSlice&, const HeldSlice&) = default;
};

struct GpuMig {
  bool enabled = false;          // MIG mode now.
  bool pending_enabled = false;  // MIG mode after the next GPU reset.
  std::vector<MigProfile> profiles;
  std::vector<MigInstance> instances;  // Ordered by gpu_instance.
  friend bool operator==(const GpuMig&, const GpuMig&) = default;
};

// How two GPUs of a node reach each other (`nvidia-smi topo -m`), best first.
enum class GpuLinkKind {
  kNvlink,  // NV#: # bonded NVLinks.
  kPix,     // At most one PCIe bridge.
  kPxb,     // Several PCIe bridges, no host bridge.
  kPhb,     // Through a PCIe host bridge (one CPU).
  kNode,    // Between host bridges of one NUMA node.
  kSys,     // Across NUMA nodes (SMP interconnect).
};

struct GpuLink {
  int peer = -1;  // The other GPU's index.
  GpuLinkKind kind = GpuLinkKind::kSys;
  int nvlinks = 0;  // kNvlink only: how many links are bonded.
  friend bool operator==(const GpuLink&, const GpuLink&) = default;
};

const char* GpuLinkKindName(GpuLinkKind kind);  // "nvlink", "pix", ...
std::optional<GpuLinkKind> ParseGpuLinkKind(absl::string_view name);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_MIG_H_
