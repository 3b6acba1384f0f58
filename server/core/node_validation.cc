#include "server/core/node_validation.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/core/cdi_names.h"
#include "server/core/error_reason.h"
#include "server/core/mig_validation.h"
#include "server/core/validation.h"

namespace wsched::core {
namespace {

void CheckText(ErrorList& errors, const std::string& path, const std::string& value, size_t max,
               bool required) {
  if (required && value.empty()) {
    errors.Add(path, "is required");
  } else if (!IsBoundedText(value, max)) {
    errors.Add(path, absl::StrCat("must be at most ", max, " printable characters"));
  }
}

void CheckNonNegative(ErrorList& errors, const std::string& path, int64_t value) {
  if (value < 0) errors.Add(path, absl::StrCat("must be >= 0, got ", value));
}

void CheckCdiName(ErrorList& errors, const std::string& path, const std::string& name) {
  if (!IsCdiQualifiedName(name)) {
    errors.Add(path, absl::StrCat("\"", name.substr(0, 64),
                                  "\" is not a qualified CDI device name (vendor/class=name)"));
  }
}

// What the node's CDI spec names. An inline node names nothing: its answers
// carry the spec, so a name would point at a file that is not there.
void CheckCdi(ErrorList& errors, const NodeInfo& node, absl::string_view prefix) {
  const std::string at = absl::StrCat(prefix, ".cdi");
  const NodeCdi& cdi = node.cdi;
  bool inline_mode = cdi.mode == CdiMode::kInline;
  if (inline_mode && (!cdi.spec_dir.empty() || !cdi.extra_devices.empty())) {
    errors.Add(at + ".mode", "is required when spec_dir or extra_devices are set");
  }
  if (!inline_mode && (!absl::StartsWith(cdi.spec_dir, "/") || !IsBoundedText(cdi.spec_dir, 256))) {
    errors.Add(at + ".spec_dir", "must be an absolute path of at most 256 characters");
  }
  if (cdi.extra_devices.size() > kMaxCdiExtraDevices) {
    errors.Add(at + ".extra_devices", absl::StrCat("at most ", kMaxCdiExtraDevices));
  }
  for (size_t i = 0; i < cdi.extra_devices.size() && i < kMaxCdiExtraDevices; ++i) {
    std::string device_at = absl::StrCat(at, ".extra_devices[", i, "]");
    const CdiExtraDevice& device = cdi.extra_devices[i];
    if (!absl::StartsWith(device.path, "/dev/") || !IsBoundedText(device.path, 128)) {
      errors.Add(device_at + ".path", "must be a path under /dev/");
    }
    CheckCdiName(errors, device_at + ".name", device.name);
  }
  if (cdi.problems.size() > kMaxCdiProblems) {
    errors.Add(at + ".problems", absl::StrCat("at most ", kMaxCdiProblems));
  }
  for (size_t i = 0; i < cdi.problems.size() && i < kMaxCdiProblems; ++i) {
    CheckText(errors, absl::StrCat(at, ".problems[", i, "]"), cdi.problems[i], 512, true);
  }
  for (size_t i = 0; i < node.gpus.size() && i < kMaxGpusPerNode; ++i) {
    const std::string& name = node.gpus[i].cdi_device;
    if (name.empty()) continue;
    std::string gpu_at = absl::StrCat(prefix, ".gpus[", i, "].cdi_device");
    if (inline_mode) {
      errors.Add(gpu_at, "must be empty unless cdi.mode is set");
    } else {
      CheckCdiName(errors, gpu_at, name);
    }
  }
}

}  // namespace

absl::Status ValidateNodeInfo(const NodeInfo& node, absl::string_view prefix) {
  ErrorList errors;
  auto field = [&](absl::string_view name) { return absl::StrCat(prefix, ".", name); };
  if (!IsDnsSubdomain(node.name)) {
    errors.Add(field("name"), "must be a DNS subdomain (a-z, 0-9, '-', '.'; <= 253 chars)");
  }
  if (!IsDnsLabel(node.pool)) errors.Add(field("pool"), "must be a pool id (a DNS label)");
  CheckText(errors, field("provider_id"), node.provider_id, 256, false);
  CheckNonNegative(errors, field("allocatable.cpu_millis"), node.cpu_millis);
  CheckNonNegative(errors, field("allocatable.memory_bytes"), node.memory_bytes);
  CheckNonNegative(errors, field("allocatable.ephemeral_storage_bytes"), node.ephemeral_storage_bytes);
  CheckNonNegative(errors, field("allocatable.disk_bytes"), node.disk_bytes);
  CheckText(errors, field("kernel_version"), node.kernel_version, 128, true);
  CheckText(errors, field("os_id"), node.os_id, 64, false);
  CheckText(errors, field("os_version"), node.os_version, 64, false);
  CheckText(errors, field("driver_version"), node.driver_version, 64, false);
  if (node.gpus.size() > kMaxGpusPerNode) {
    errors.Add(field("gpus"), absl::StrCat("at most ", kMaxGpusPerNode, " GPUs"));
  }
  std::set<int> indices;
  std::set<std::string> uuids, addresses;
  for (size_t i = 0; i < node.gpus.size() && i < kMaxGpusPerNode; ++i) {
    const Gpu& gpu = node.gpus[i];
    std::string at = field(absl::StrCat("gpus[", i, "]"));
    if (gpu.index < 0 || gpu.index > 254) {
      errors.Add(at + ".index", absl::StrCat("must be 0..254, got ", gpu.index));
    } else if (!indices.insert(gpu.index).second) {
      errors.Add(at + ".index", absl::StrCat("duplicate GPU index ", gpu.index));
    }
    CheckText(errors, at + ".uuid", gpu.uuid, 128, true);
    if (!gpu.uuid.empty() && !uuids.insert(gpu.uuid).second) {
      errors.Add(at + ".uuid", absl::StrCat("duplicate GPU UUID ", gpu.uuid));
    }
    if (!IsPciAddress(gpu.pci_address)) {
      errors.Add(at + ".pci_address",
                 absl::StrCat("\"", gpu.pci_address.substr(0, 40),
                              "\" is not a PCI address (dddd:bb:dd.f, lower-case hex)"));
    } else if (!addresses.insert(gpu.pci_address).second) {
      errors.Add(at + ".pci_address", absl::StrCat("duplicate PCI address ", gpu.pci_address));
    }
    CheckText(errors, at + ".model", gpu.model, 128, true);
    CheckNonNegative(errors, at + ".memory_bytes", gpu.memory_bytes);
    if (gpu.numa_node < -1) errors.Add(at + ".numa_node", "must be >= -1 (-1 = unknown)");
    if (gpu.iommu_group < -1) errors.Add(at + ".iommu_group", "must be >= -1 (-1 = IOMMU off)");
    if (gpu.iommu_group_members.size() > kMaxIommuGroupMembers) {
      errors.Add(at + ".iommu_group_members", absl::StrCat("at most ", kMaxIommuGroupMembers));
    }
    for (size_t m = 0; m < gpu.iommu_group_members.size() && m < kMaxIommuGroupMembers; ++m) {
      const PciDevice& member = gpu.iommu_group_members[m];
      std::string member_at = absl::StrCat(at, ".iommu_group_members[", m, "]");
      if (!IsPciAddress(member.address)) {
        errors.Add(member_at + ".pci_address", "is not a PCI address (dddd:bb:dd.f)");
      }
      // Shown to operators and stored: bounded like every reported string.
      CheckText(errors, member_at + ".pci_class", member.pci_class, 16, false);
      CheckText(errors, member_at + ".vendor", member.vendor, 16, false);
      if (member.driver) CheckText(errors, member_at + ".driver", *member.driver, 64, false);
    }
    if (gpu.driver) CheckText(errors, at + ".driver", *gpu.driver, 64, false);
    if (gpu.mig) CheckGpuMig(errors, at, *gpu.mig);
  }
  // Links name peers by index: checked once every index is known.
  for (size_t i = 0; i < node.gpus.size() && i < kMaxGpusPerNode; ++i) {
    if (node.gpus[i].links.size() > kMaxGpusPerNode) {
      errors.Add(field(absl::StrCat("gpus[", i, "].links")), absl::StrCat("at most ", kMaxGpusPerNode));
      continue;
    }
    CheckGpuLinks(errors, field(absl::StrCat("gpus[", i, "]")), node.gpus[i], indices);
  }
  if (node.control_devices.size() > kMaxControlDevices) {
    errors.Add(field("control_devices"), absl::StrCat("at most ", kMaxControlDevices));
  }
  for (size_t i = 0; i < node.control_devices.size() && i < kMaxControlDevices; ++i) {
    const DeviceNode& device = node.control_devices[i];
    std::string at = field(absl::StrCat("control_devices[", i, "]"));
    if (!absl::StartsWith(device.path, "/dev/") || !IsBoundedText(device.path, 128)) {
      errors.Add(at + ".path", "must be a path under /dev/");
    }
    if (device.type != 'c' && device.type != 'b') errors.Add(at + ".type", "must be \"c\" or \"b\"");
    if (device.major < 0 || device.minor < 0) errors.Add(at, "major and minor must be >= 0");
    if (device.permissions.empty() || device.permissions.size() > 3 ||
        device.permissions.find_first_not_of("rwm") != std::string::npos) {
      errors.Add(at + ".permissions", "must combine r, w and m");
    }
  }
  CheckCdi(errors, node, prefix);
  if (errors.empty()) return absl::OkStatus();
  return InvalidFieldLinesError(errors.errors());
}

}  // namespace wsched::core
