#include "server/agent/pci.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/core/validation.h"

namespace wsched::agent {
namespace {

constexpr char kPciDevices[] = "/sys/bus/pci/devices";

std::string DevicePath(absl::string_view address, absl::string_view file) {
  return absl::StrCat(kPciDevices, "/", address, "/", file);
}

// sysfs prints ids as "0x10de"; fake trees and odd kernels may differ in case.
absl::StatusOr<std::string> ReadHexId(const RootedFs& fs, absl::string_view address,
                                      absl::string_view file) {
  absl::StatusOr<std::string> value = fs.ReadTrimmed(DevicePath(address, file));
  if (!value.ok()) return value.status();
  std::string id = absl::AsciiStrToLower(*value);
  if (!absl::StartsWith(id, "0x")) id = absl::StrCat("0x", id);
  return id;
}

int ReadNumaNode(const RootedFs& fs, absl::string_view address) {
  absl::StatusOr<std::string> value = fs.ReadTrimmed(DevicePath(address, "numa_node"));
  int node = -1;
  if (!value.ok() || !absl::SimpleAtoi(*value, &node)) return -1;
  return node;
}

// Follows the iommu_group link inside the root; the group number is the name
// of the directory it points to (/sys/kernel/iommu_groups/<N>).
absl::Status ReadIommuGroup(const RootedFs& fs, PciFunction& function) {
  namespace stdfs = std::filesystem;
  absl::StatusOr<stdfs::path> device_dir = fs.Resolve(DevicePath(function.address, ""));
  if (!device_dir.ok()) return device_dir.status();
  std::error_code error;
  if (!stdfs::exists(stdfs::symlink_status(*device_dir / "iommu_group", error))) {
    return absl::OkStatus();  // No link at all: the IOMMU is off.
  }
  std::string link = DevicePath(function.address, "iommu_group");
  absl::StatusOr<stdfs::path> group_dir = fs.Resolve(link);
  if (!group_dir.ok()) return group_dir.status();
  if (!stdfs::is_directory(*group_dir, error)) {
    return absl::DataLossError(absl::StrCat(link, " points to missing ", group_dir->string()));
  }
  std::string name = group_dir->filename().string();
  if (!absl::SimpleAtoi(name, &function.iommu_group) || function.iommu_group < 0) {
    return absl::DataLossError(absl::StrCat(group_dir->string(), ": ", link,
                                            " does not point to an IOMMU group number"));
  }
  // The group's devices/ lists members by address (symlinks on a real host).
  absl::StatusOr<std::vector<std::string>> members =
      fs.ListDir(absl::StrCat("/sys/kernel/iommu_groups/", name, "/devices"));
  if (!members.ok()) return members.status();
  function.iommu_group_addresses = *std::move(members);
  return absl::OkStatus();
}

// The driver is the name of the directory the `driver` link points to
// (/sys/bus/pci/drivers/<name>); no link: bound to none.
absl::Status ReadDriver(const RootedFs& fs, PciFunction& function) {
  namespace stdfs = std::filesystem;
  absl::StatusOr<stdfs::path> device_dir = fs.Resolve(DevicePath(function.address, ""));
  if (!device_dir.ok()) return device_dir.status();
  std::error_code error;
  if (stdfs::exists(stdfs::symlink_status(*device_dir / "driver", error))) {
    absl::StatusOr<stdfs::path> driver = fs.Resolve(DevicePath(function.address, "driver"));
    if (!driver.ok()) return driver.status();
    function.driver = driver->filename().string();
  }
  absl::StatusOr<std::string> override_text =
      fs.ReadTrimmed(DevicePath(function.address, "driver_override"));
  if (override_text.ok() && *override_text != "(null)") function.driver_override = *override_text;
  return absl::OkStatus();
}

absl::StatusOr<PciFunction> ReadFunction(const RootedFs& fs, const std::string& address) {
  PciFunction function;
  function.address = address;
  absl::StatusOr<std::string> vendor = ReadHexId(fs, address, "vendor");
  if (!vendor.ok()) return vendor.status();
  function.vendor = *std::move(vendor);
  absl::StatusOr<std::string> device = ReadHexId(fs, address, "device");
  if (!device.ok()) return device.status();
  function.device = *std::move(device);
  absl::StatusOr<std::string> pci_class = ReadHexId(fs, address, "class");
  if (!pci_class.ok()) return pci_class.status();
  function.pci_class = *std::move(pci_class);
  function.numa_node = ReadNumaNode(fs, address);
  if (absl::Status status = ReadIommuGroup(fs, function); !status.ok()) return status;
  if (absl::Status status = ReadDriver(fs, function); !status.ok()) return status;
  return function;
}

}  // namespace

absl::StatusOr<std::vector<PciFunction>> ScanPci(const RootedFs& fs) {
  absl::StatusOr<std::vector<std::string>> addresses = fs.ListDir(kPciDevices);
  if (absl::IsNotFound(addresses.status())) return std::vector<PciFunction>{};
  if (!addresses.ok()) return addresses.status();
  std::vector<PciFunction> functions;
  for (const std::string& address : *addresses) {
    if (!core::IsPciAddress(address)) continue;  // Not a function entry.
    absl::StatusOr<PciFunction> function = ReadFunction(fs, address);
    if (!function.ok()) return function.status();
    functions.push_back(*std::move(function));
  }
  return functions;
}

bool IsNvidiaGpu(const PciFunction& function) {
  if (function.vendor != kNvidiaVendor) return false;
  return absl::StartsWith(function.pci_class, "0x0300") ||
         absl::StartsWith(function.pci_class, "0x0302");
}

}  // namespace wsched::agent
