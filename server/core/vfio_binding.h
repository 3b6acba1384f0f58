// Whether a GPU is bound to the driver a placement needs: a VM needs the GPU
// and every member of its IOMMU group except bridges on vfio-pci (VFIO takes
// a group only when all its endpoints are), a container needs the GPU off
// vfio-pci (a GPU on vfio-pci has no NVIDIA device node to mount).
//
// Pure: judged on what the agent reports (Gpu::driver, PciDevice::driver).
// A GPU whose driver is not reported (an agent older than VFIO binding) is
// not judged, as before binding was reported: its pool's agent cannot bind
// anything either (docs/placement.md "VFIO binding").
#ifndef WSCHED_SERVER_CORE_VFIO_BINDING_H_
#define WSCHED_SERVER_CORE_VFIO_BINDING_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "server/core/node.h"
#include "server/core/pool.h"

namespace wsched::core {

inline constexpr char kVfioPciDriver[] = "vfio-pci";

// Why the GPU cannot go to a VM: the first of the GPU and its non-bridge
// group members (in reported order) not bound to vfio-pci, e.g. "GPU
// 0000:3b:00.0: group 33 member 0000:3b:00.1 is bound to snd_hda_intel, not
// vfio-pci". nullopt when the whole group is bound, or nothing is reported.
std::optional<std::string> VmBindingProblem(const Gpu& gpu);

// Why the GPU cannot go to a container as a whole GPU: it is in MIG mode
// (its agent says so), or it is bound to vfio-pci. nullopt otherwise
// (members do not matter: a container takes the GPU alone).
std::optional<std::string> ContainerBindingProblem(const Gpu& gpu);

// The problem for what the pool's GPUs serve: VmBindingProblem for a vfio
// pool, ContainerBindingProblem for a host pool. What the
// wsched_gpus_not_bound metric counts.
std::optional<std::string> PoolBindingProblem(const Gpu& gpu, GpuBinding binding);

// "host", "vfio" (the catalog's gpu_binding values).
const char* GpuBindingName(GpuBinding binding);
std::optional<GpuBinding> ParseGpuBinding(absl::string_view name);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_VFIO_BINDING_H_
