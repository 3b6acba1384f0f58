// What a placed workspace is handed: the GPUs it holds and how its runtime
// mounts them. Built once at placement (pipeline/device_spec.h), stored with
// the workspace (store/documents/) so a repeated request answers exactly the
// same, and mapped to the API answer by convert/.
#ifndef WSCHED_SERVER_CORE_HAND_OFF_H_
#define WSCHED_SERVER_CORE_HAND_OFF_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/core/node.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

struct AssignedGpu {
  int index = 0;
  std::string uuid;
  std::string pci_address;
  std::string model;
  friend bool operator==(const AssignedGpu&, const AssignedGpu&) = default;
};

// The MIG slice a slice class was handed, and the GPU it is part of.
struct AssignedSlice {
  AssignedGpu parent;
  int gpu_instance = -1;
  int compute_instance = -1;
  std::string uuid;     // "MIG-..."
  std::string profile;  // "1g.18gb"
  int compute_slices = 0;
  friend bool operator==(const AssignedSlice&, const AssignedSlice&) = default;
};

// Container isolation (placement/cdi.h has what each field holds).
struct CdiHandOff {
  CdiMode mode = CdiMode::kInline;
  std::string spec_json;  // Inline only.
  std::vector<std::string> device_names;
  // From here on only when the node has a spec of its own (mode not inline).
  std::vector<std::string> env;
  std::vector<std::string> podman_args;
  std::string kubernetes_node_name;
  std::map<std::string, std::string> kubernetes_annotations;
  std::vector<std::string> kubernetes_unnamed_devices;
  friend bool operator==(const CdiHandOff&, const CdiHandOff&) = default;
};

// VM isolation (placement/vfio.h).
struct VfioHandOff {
  std::vector<std::string> pci_addresses;
  std::vector<std::string> device_paths;
  std::vector<std::string> cloud_hypervisor_args;
  friend bool operator==(const VfioHandOff&, const VfioHandOff&) = default;
};

struct HandOff {
  std::vector<AssignedGpu> gpus;  // Held whole; none for a slice class.
  std::optional<AssignedSlice> slice;
  // At most one of the two; neither for a CPU class on a node without CDI
  // information (nothing there to name).
  std::optional<CdiHandOff> cdi;
  std::optional<VfioHandOff> vfio;
  std::vector<DeviceNode> extra_devices;  // The class's (fuse, tun, kvm).
  // Two or more GPUs: the weakest link between any two as the node reports
  // them; nullopt for fewer GPUs or unknown links.
  std::optional<GpuLinkKind> gpu_link;
  friend bool operator==(const HandOff&, const HandOff&) = default;
};

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_HAND_OFF_H_
