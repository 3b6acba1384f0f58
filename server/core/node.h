// Nodes and their GPUs, as reported by the node agent.
#ifndef WSCHED_SERVER_CORE_NODE_H_
#define WSCHED_SERVER_CORE_NODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/mig.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

enum class NodeState { kProvisioning, kReady, kCordoned, kDraining, kLost };
// kInstalling: the node's agent runs the install job (a `node` pool,
// docs/operations.md "Driver installs").
// kOutdated: the node's driver works for its kernel but the policy now wants
// another; it keeps taking work until the pool's rollout releases it
// (core/driver_rollout.h).
enum class DriverState {
  kNotNeeded,
  kReady,
  kNeedsDriver,
  kInstallFailed,
  kNoPolicy,
  kInstalling,
  kOutdated
};

// Another PCI device in a GPU's IOMMU group.
struct PciDevice {
  std::string address;    // "0000:3b:00.1"
  std::string pci_class;  // "0x040300"
  std::string vendor;     // "0x10de"
  // The kernel driver it is bound to ("snd_hda_intel", "vfio-pci"); "" when
  // bound to none; nullopt when the agent does not say (agents before VFIO
  // binding, docs/agent.md "VFIO binding").
  std::optional<std::string> driver;
  friend bool operator==(const PciDevice&, const PciDevice&) = default;
};

struct Gpu {
  int index = 0;
  std::string uuid;
  std::string pci_address;
  std::string model;
  int64_t memory_bytes = 0;
  int numa_node = -1;
  // Whether placement may hand it out. False while the agent reports it
  // unhealthy and, after that, until it has reported healthy for the
  // server's --gpu_healthy_for (inventory/gpu_health.h).
  bool healthy = true;
  int iommu_group = -1;  // -1: IOMMU off.
  std::vector<PciDevice> iommu_group_members;  // Excluding the GPU itself.
  std::string health_reason;  // Why not healthy, e.g. "XID 79: ..."; empty when healthy.
  absl::Time unhealthy_since = absl::InfinitePast();  // When it went out of service.
  // While out of service: since when the agent reports it healthy again.
  absl::Time reported_healthy_since = absl::InfinitePast();
  // The qualified CDI name the node's spec gives this GPU
  // ("wsched.io/gpu=GPU-..."); empty on a node without CDI information.
  std::string cdi_device;
  // The kernel driver the GPU itself is bound to ("nvidia", "vfio-pci"); ""
  // when none; nullopt when the agent does not say. An agent that reports
  // drivers sets this and every member's (core/vfio_binding.h).
  std::optional<std::string> driver;
  // MIG mode, profiles and slices; nullopt on a GPU without MIG (or an
  // agent that does not report it).
  std::optional<GpuMig> mig;
  // How this GPU reaches each other GPU of the node; empty when the agent
  // does not know (no nvidia-smi), and then no placement counts on a link.
  std::vector<GpuLink> links;
  friend bool operator==(const Gpu&, const Gpu&) = default;
};

// Where container runtimes on the node find a GPU workspace's devices
// (docs/agent.md "The node's CDI spec").
enum class CdiMode {
  kInline,  // Nothing reported: the placement answer carries the spec itself.
  kWsched,  // The agent wrote wsched's own spec (kind wsched.io/gpu).
  kNvidia,  // NVIDIA's generated spec (kind nvidia.com/gpu) covers the GPUs.
};

// An extra device node (fuse, tun, kvm) the node's wsched.io/device spec names.
struct CdiExtraDevice {
  std::string path;  // "/dev/fuse"
  std::string name;  // "wsched.io/device=fuse"
  friend bool operator==(const CdiExtraDevice&, const CdiExtraDevice&) = default;
};

struct NodeCdi {
  CdiMode mode = CdiMode::kInline;
  std::string spec_dir;  // Where the node's spec files live, e.g. "/var/run/cdi".
  std::vector<CdiExtraDevice> extra_devices;
  // What the agent could not describe ("libcuda.so is 535.104.05, the loaded
  // driver 550.54.15"); the GPUs concerned are reported unhealthy with it.
  std::vector<std::string> problems;
  friend bool operator==(const NodeCdi&, const NodeCdi&) = default;
};

// What the agent reports about a node.
struct NodeInfo {
  std::string name;
  std::string pool;
  std::string provider_id;
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t ephemeral_storage_bytes = 0;
  int64_t disk_bytes = 0;
  std::string kernel_version;
  std::string os_id;
  std::string os_version;
  std::string driver_version;  // Empty: no driver loaded.
  std::vector<Gpu> gpus;
  std::vector<DeviceNode> control_devices;  // nvidiactl, nvidia-uvm, ...
  NodeCdi cdi;
  friend bool operator==(const NodeInfo&, const NodeInfo&) = default;
};

const char* NodeStateName(NodeState state);
const char* CdiModeName(CdiMode mode);  // "inline", "wsched", "nvidia".
const char* DriverStateName(DriverState state);
// Inverse of the names above; nullopt for an unknown name.
std::optional<NodeState> ParseNodeState(absl::string_view name);
std::optional<DriverState> ParseDriverState(absl::string_view name);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_NODE_H_
