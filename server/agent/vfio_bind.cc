#include "server/agent/vfio_bind.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/iommu.h"
#include "server/core/validation.h"
#include "server/core/vfio_binding.h"

namespace wsched::agent {
namespace {

constexpr char kDriversProbe[] = "/sys/bus/pci/drivers_probe";
constexpr char kVfioDriverDir[] = "/sys/bus/pci/drivers/vfio-pci";

std::string DevicePath(const std::string& address, absl::string_view file) {
  return absl::StrCat("/sys/bus/pci/devices/", address, "/", file);
}

// "0000:3b:00.1" -> "0000:3b:00": the functions of one device share it.
std::string SlotOf(const std::string& address) {
  auto dot = address.rfind('.');
  return dot == std::string::npos ? address : address.substr(0, dot);
}

absl::Status ErrnoStatus(int error, const std::string& what) {
  std::string message = absl::StrCat(what, ": ", std::strerror(error));
  switch (error) {
    case ENOENT: return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(
          absl::StrCat(message, " (binding writes sysfs and needs root; docs/agent.md)"));
    default: return absl::UnavailableError(message);
  }
}

// A group's members, each judged: what to write, or why the group is left
// alone. `members` are the group's addresses as the kernel lists them.
struct GroupPlan {
  std::vector<const PciFunction*> endpoints;  // Not bridges, sorted by address.
  std::string refusal;                        // Non-empty: do not touch the group.
};

GroupPlan PlanGroup(const std::vector<std::string>& members,
                    const std::map<std::string, const PciFunction*>& by_address) {
  GroupPlan plan;
  std::set<std::string> gpu_slots;
  for (const std::string& address : members) {
    auto it = by_address.find(address);
    if (it != by_address.end() && IsNvidiaGpu(*it->second)) gpu_slots.insert(SlotOf(address));
  }
  for (const std::string& address : members) {
    auto it = by_address.find(address);
    if (!core::IsPciAddress(address) || it == by_address.end()) {
      // Its driver cannot be known, so the group cannot be said bound.
      plan.refusal = absl::StrCat("member ", address, " is not in /sys/bus/pci/devices");
      return plan;
    }
    const PciFunction& member = *it->second;
    if (core::IsPciBridgeClass(member.pci_class)) continue;  // Stays on pcieport.
    if (!gpu_slots.contains(SlotOf(address))) {
      plan.refusal = absl::StrCat("the group also holds ", address, " (",
                                  core::PciClassName(member.pci_class), ", driver ",
                                  member.driver.empty() ? "none" : member.driver,
                                  "), which stays with the host; not binding it");
      return plan;
    }
    plan.endpoints.push_back(&member);
  }
  return plan;
}

}  // namespace

absl::Status RootedSysfsWriter::Write(const std::string& node_path, const std::string& value) {
  absl::StatusOr<std::filesystem::path> path = fs_.Resolve(node_path);
  if (!path.ok()) return path.status();
  // No O_CREAT: sysfs attributes exist or the kernel lacks them. O_TRUNC is
  // ignored by sysfs and keeps a fake tree's file holding only this value.
  int fd = open(path->c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("opening ", node_path));
  // One write(2): a sysfs store handler sees the value whole, once.
  ssize_t written = write(fd, value.data(), value.size());
  int error = errno;
  close(fd);
  if (written < 0) return ErrnoStatus(error, absl::StrCat("writing ", value, " to ", node_path));
  if (static_cast<size_t>(written) != value.size()) {
    return absl::UnavailableError(absl::StrCat("short write of ", value, " to ", node_path));
  }
  return absl::OkStatus();
}

std::vector<SysfsWrite> PlanVfioBind(const PciFunction& device) {
  if (device.driver == core::kVfioPciDriver) return {};
  std::vector<SysfsWrite> writes;
  if (device.driver_override != core::kVfioPciDriver) {
    writes.push_back({DevicePath(device.address, "driver_override"), core::kVfioPciDriver});
  }
  if (!device.driver.empty()) {
    writes.push_back({DevicePath(device.address, "driver/unbind"), device.address});
  }
  writes.push_back({kDriversProbe, device.address});
  return writes;
}

absl::StatusOr<std::vector<GroupBinding>> BindGpuGroupsToVfio(const RootedFs& fs,
                                                              SysfsWriter& writer) {
  absl::StatusOr<std::vector<PciFunction>> functions = ScanPci(fs);
  if (!functions.ok()) return functions.status();
  std::map<std::string, const PciFunction*> by_address;
  for (const PciFunction& function : *functions) by_address[function.address] = &function;

  // Group number -> its GPUs and members (the kernel lists them per device).
  std::map<int, GroupBinding> groups;
  std::map<int, std::vector<std::string>> members;
  for (const PciFunction& function : *functions) {
    if (!IsNvidiaGpu(function) || function.iommu_group < 0) continue;
    GroupBinding& group = groups[function.iommu_group];
    group.group = function.iommu_group;
    group.gpus.push_back(function.address);
    members[function.iommu_group] = function.iommu_group_addresses;
  }

  const bool vfio_loaded = fs.Exists(kVfioDriverDir);
  std::vector<GroupBinding> result;
  for (auto& [number, group] : groups) {
    GroupPlan plan = PlanGroup(members[number], by_address);
    const std::string where = absl::StrCat("IOMMU group ", number, " (GPU ",
                                           absl::StrJoin(group.gpus, ", "), ")");
    std::vector<SysfsWrite> writes;
    for (const PciFunction* endpoint : plan.endpoints) {
      std::vector<SysfsWrite> device = PlanVfioBind(*endpoint);
      writes.insert(writes.end(), device.begin(), device.end());
    }
    if (!plan.refusal.empty()) {
      group.problem = absl::StrCat(where, ": ", plan.refusal);
    } else if (!writes.empty() && !vfio_loaded) {
      // Unbinding without a driver to take the devices over would leave
      // them with none: check first, write nothing.
      group.problem = absl::StrCat(where, ": the vfio-pci driver is not loaded (",
                                   kVfioDriverDir, " is missing; modprobe vfio-pci)");
    } else {
      for (const SysfsWrite& write : writes) {
        if (absl::Status status = writer.Write(write.path, write.value); !status.ok()) {
          group.problem = absl::StrCat(where, ": ", status.message());
          break;
        }
        group.writes.push_back(write);
      }
    }
    if (group.problem.empty()) {
      // The kernel makes the group's VFIO device node when the first member
      // binds to vfio-pci; without it no VM can open the group.
      const std::string device = absl::StrCat("/dev/vfio/", number);
      if (fs.Exists(device)) {
        group.bound = true;
      } else {
        group.device_missing = true;
        group.problem = absl::StrCat(where, ": ", device, " did not appear after binding");
      }
    }
    result.push_back(std::move(group));
  }
  return result;
}

}  // namespace wsched::agent
