#include "server/agent/discovery.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/agent/host_facts.h"
#include "server/agent/nvidia_mig.h"
#include "server/agent/nvidia_proc.h"
#include "server/agent/pci.h"
#include "server/agent/rooted_fs.h"

namespace wsched::agent {
namespace {

const GpuUsage* FindByAddress(const std::vector<GpuUsage>& sample, const std::string& address) {
  for (const GpuUsage& usage : sample) {
    if (usage.pci_address == address) return &usage;
  }
  return nullptr;
}

std::vector<core::PciDevice> OtherGroupMembers(
    const PciFunction& gpu, const std::map<std::string, const PciFunction*>& by_address) {
  std::vector<core::PciDevice> members;
  for (const std::string& address : gpu.iommu_group_addresses) {
    if (address == gpu.address) continue;
    core::PciDevice member{.address = address};
    // A member missing from /sys/bus/pci/devices keeps an empty class, which
    // the IOMMU rule treats as unknown and therefore unsafe, and no reported
    // driver, which the binding rule treats as not bound.
    if (auto it = by_address.find(address); it != by_address.end()) {
      member.pci_class = it->second->pci_class;
      member.vendor = it->second->vendor;
      member.driver = it->second->driver;
    }
    members.push_back(std::move(member));
  }
  return members;
}

// A GPU as far as sysfs and the driver's information file describe it.
struct GpuFacts {
  const PciFunction* function;
  std::optional<GpuInformation> information;
};

// The driver's device minor is the index (/dev/nvidiaN) when it says; GPUs
// it says nothing about take the lowest free numbers in PCI order, which is
// how the driver numbers them too.
std::vector<int> AssignIndices(const std::vector<GpuFacts>& gpus) {
  std::set<int> taken;
  for (const GpuFacts& gpu : gpus) {
    if (gpu.information && gpu.information->device_minor) {
      taken.insert(*gpu.information->device_minor);
    }
  }
  std::vector<int> indices;
  int next_free = 0;
  for (const GpuFacts& gpu : gpus) {
    if (gpu.information && gpu.information->device_minor) {
      indices.push_back(*gpu.information->device_minor);
      continue;
    }
    while (taken.count(next_free) > 0) ++next_free;
    taken.insert(next_free);
    indices.push_back(next_free);
  }
  return indices;
}

core::Gpu BuildGpu(const GpuFacts& facts, int index, const DiscoveryOptions& options,
                   const std::map<std::string, const PciFunction*>& by_address) {
  const PciFunction& function = *facts.function;
  core::Gpu gpu;
  gpu.index = index;
  gpu.pci_address = function.address;
  gpu.numa_node = function.numa_node;
  gpu.iommu_group = function.iommu_group;
  gpu.iommu_group_members = OtherGroupMembers(function, by_address);
  gpu.driver = function.driver;  // Reported: the server judges the binding with it.
  const GpuUsage* sampled = FindByAddress(options.nvidia_smi, function.address);
  if (facts.information) {
    gpu.uuid = facts.information->uuid;
    gpu.model = facts.information->model;
  }
  if (sampled != nullptr) {
    if (gpu.uuid.empty()) gpu.uuid = sampled->uuid;
    if (gpu.model.empty()) gpu.model = sampled->name;
    gpu.memory_bytes = std::max<int64_t>(sampled->memory_total_bytes, 0);
  }
  // Without the driver nothing names the GPU; keep stable, recognisable
  // stand-ins so the node can still register and be seen as "needs driver".
  if (gpu.model.empty()) {
    gpu.model = absl::StrCat("pci-10de-", absl::StripPrefix(function.device, "0x"));
  }
  if (gpu.uuid.empty()) gpu.uuid = absl::StrCat("PCI-", function.address);
  return gpu;
}

absl::Status ReadHostFacts(const RootedFs& fs, core::NodeInfo& node) {
  absl::StatusOr<std::string> kernel = ReadKernelRelease(fs);
  if (!kernel.ok()) return kernel.status();
  node.kernel_version = *std::move(kernel);
  absl::StatusOr<OsRelease> os = ReadOsRelease(fs);
  if (!os.ok()) return os.status();
  node.os_id = os->id;
  node.os_version = os->version_id;
  absl::StatusOr<int64_t> cpu_millis = ReadCpuMillis(fs);
  if (!cpu_millis.ok()) return cpu_millis.status();
  node.cpu_millis = *cpu_millis;
  absl::StatusOr<int64_t> memory = ReadMemoryBytes(fs);
  if (!memory.ok()) return memory.status();
  node.memory_bytes = *memory;
  absl::StatusOr<std::string> driver = ReadDriverVersion(fs);
  if (!driver.ok()) return driver.status();
  node.driver_version = *std::move(driver);
  return absl::OkStatus();
}

// The device node a capability file names; nullopt when the file is not
// there (the driver has no such instance, or /proc/driver is hidden) or does
// not say, which leaves the slice without it and so not usable. A file that
// is there but cannot be read fails, as the driver's other files do.
absl::StatusOr<std::optional<core::DeviceNode>> ReadCapabilityNode(const RootedFs& fs,
                                                                   const std::string& path,
                                                                   int64_t caps_major) {
  absl::StatusOr<std::string> text = fs.ReadFile(path);
  if (absl::IsNotFound(text.status())) return std::optional<core::DeviceNode>();
  if (!text.ok()) return text.status();
  absl::StatusOr<int64_t> minor = ParseCapabilityMinor(*text);
  if (!minor.ok()) return std::optional<core::DeviceNode>();
  return std::optional<core::DeviceNode>(CapabilityDeviceNode(caps_major, *minor));
}

// The nvidia-caps major from /proc/devices; nullopt without the module's
// entry, and then no slice has device nodes.
absl::StatusOr<std::optional<int64_t>> ReadCapsMajor(const RootedFs& fs) {
  absl::StatusOr<std::string> devices = fs.ReadFile("/proc/devices");
  if (absl::IsNotFound(devices.status())) return std::optional<int64_t>();
  if (!devices.ok()) return devices.status();
  return ParseCharDeviceMajor(*devices, "nvidia-caps");
}

// Each GPU's MIG mode, profiles and slices from the layout, with the
// slices' capability device nodes. The capability files are numbered by the
// driver's device minor, which the GPU's index is.
absl::Status AttachMig(const RootedFs& fs, const NvidiaLayout& layout,
                       std::vector<core::Gpu>& gpus) {
  std::optional<std::optional<int64_t>> caps_major;  // Read at the first slice.
  for (core::Gpu& gpu : gpus) {
    auto mig = layout.mig.find(gpu.pci_address);
    if (mig == layout.mig.end()) continue;
    gpu.mig = mig->second;
    for (core::MigInstance& instance : gpu.mig->instances) {
      if (!caps_major) {
        absl::StatusOr<std::optional<int64_t>> major = ReadCapsMajor(fs);
        if (!major.ok()) return major.status();
        caps_major = *major;
      }
      if (!*caps_major) break;
      absl::StatusOr<std::optional<core::DeviceNode>> gi =
          ReadCapabilityNode(fs, MigCapabilityPath(gpu.index, instance.gpu_instance), **caps_major);
      if (!gi.ok()) return gi.status();
      instance.gi_access = *std::move(gi);
      if (instance.compute_instance < 0) continue;
      absl::StatusOr<std::optional<core::DeviceNode>> ci = ReadCapabilityNode(
          fs, MigCapabilityPath(gpu.index, instance.gpu_instance, instance.compute_instance),
          **caps_major);
      if (!ci.ok()) return ci.status();
      instance.ci_access = *std::move(ci);
    }
  }
  return absl::OkStatus();
}

// Each GPU's links from the layout, peers by index; a peer discovery did not
// find is left out.
void AttachLinks(const NvidiaLayout& layout, std::vector<core::Gpu>& gpus) {
  std::map<std::string, int> index_by_address;
  for (const core::Gpu& gpu : gpus) index_by_address[gpu.pci_address] = gpu.index;
  for (core::Gpu& gpu : gpus) {
    auto links = layout.links.find(gpu.pci_address);
    if (links == layout.links.end()) continue;
    for (const PeerLink& link : links->second) {
      auto peer = index_by_address.find(link.peer_address);
      if (peer == index_by_address.end() || peer->second == gpu.index) continue;
      gpu.links.push_back({.peer = peer->second, .kind = link.kind, .nvlinks = link.nvlinks});
    }
    std::sort(gpu.links.begin(), gpu.links.end(),
              [](const core::GpuLink& a, const core::GpuLink& b) { return a.peer < b.peer; });
  }
}

absl::Status ReadGpus(const RootedFs& fs, const DiscoveryOptions& options,
                      core::NodeInfo& node) {
  absl::StatusOr<std::vector<PciFunction>> functions = ScanPci(fs);
  if (!functions.ok()) return functions.status();
  std::map<std::string, const PciFunction*> by_address;
  std::vector<GpuFacts> facts;  // In PCI address order, as ScanPci sorts.
  for (const PciFunction& function : *functions) {
    by_address[function.address] = &function;
    if (!IsNvidiaGpu(function)) continue;
    absl::StatusOr<std::optional<GpuInformation>> information =
        ReadGpuInformation(fs, function.address);
    if (!information.ok()) return information.status();
    facts.push_back({&function, *std::move(information)});
  }
  std::vector<int> indices = AssignIndices(facts);
  for (size_t i = 0; i < facts.size(); ++i) {
    node.gpus.push_back(BuildGpu(facts[i], indices[i], options, by_address));
  }
  std::sort(node.gpus.begin(), node.gpus.end(),
            [](const core::Gpu& a, const core::Gpu& b) { return a.index < b.index; });
  AttachLinks(options.nvidia_layout, node.gpus);
  return AttachMig(fs, options.nvidia_layout, node.gpus);
}

}  // namespace

absl::StatusOr<core::NodeInfo> DiscoverNode(const DiscoveryOptions& options) {
  RootedFs fs(options.root);
  core::NodeInfo node;
  node.name = options.node_name.empty() ? ReadHostname(fs) : options.node_name;
  node.pool = options.pool;
  node.provider_id = options.provider_id;
  if (absl::Status status = ReadHostFacts(fs, node); !status.ok()) return status;
  if (absl::Status status = ReadGpus(fs, options, node); !status.ok()) return status;
  absl::StatusOr<std::vector<core::DeviceNode>> control = ReadControlDevices(fs);
  if (!control.ok()) return control.status();
  node.control_devices = *std::move(control);
  return node;
}

}  // namespace wsched::agent
