// Test-only: a SysfsWriter that records every write and plays the kernel's
// part on a copy of a fake tree, so binding can be checked end to end.
#ifndef WSCHED_SERVER_AGENT_FAKE_KERNEL_TEST_UTIL_H_
#define WSCHED_SERVER_AGENT_FAKE_KERNEL_TEST_UTIL_H_

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "server/agent/vfio_bind.h"

namespace wsched::agent::testing {

// Copies a tree (links as links) to `to`, which must not exist yet.
inline void CopyTree(const std::string& from, const std::filesystem::path& to) {
  std::filesystem::copy(from, to,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
}

// What the kernel does for the three writes of a bind (vfio_bind.h): keeps
// driver_override, drops the device's driver link on unbind, and on
// drivers_probe binds it to the override and makes /dev/vfio/<group> when
// that is vfio-pci. `refuse`: a path whose write fails (EBUSY-like).
class FakeKernel : public SysfsWriter {
 public:
  explicit FakeKernel(std::filesystem::path root) : root_(std::move(root)) {}

  std::optional<std::string> refuse;

  absl::Status Write(const std::string& node_path, const std::string& value) override {
    absl::MutexLock lock(&mutex_);
    writes_.push_back({node_path, value});
    if (refuse && *refuse == node_path) {
      return absl::UnavailableError(absl::StrCat("writing ", value, " to ", node_path,
                                                 ": Device or resource busy"));
    }
    if (absl::EndsWith(node_path, "/driver_override")) {
      std::ofstream(Host(node_path)) << value << "\n";
    } else if (absl::EndsWith(node_path, "/driver/unbind")) {
      std::filesystem::remove(Device(value) / "driver");
    } else if (node_path == "/sys/bus/pci/drivers_probe") {
      std::ifstream in(Device(value) / "driver_override");
      std::string driver;
      in >> driver;
      if (driver != "vfio-pci") return absl::OkStatus();
      // Absolute target: RootedFs follows it inside the root.
      std::filesystem::create_symlink("/sys/bus/pci/drivers/vfio-pci", Device(value) / "driver");
      std::string group =
          std::filesystem::read_symlink(Device(value) / "iommu_group").filename().string();
      std::filesystem::create_directories(root_ / "dev/vfio");
      std::ofstream(root_ / "dev/vfio" / group) << "";
    }
    return absl::OkStatus();
  }

  std::vector<SysfsWrite> writes() {
    absl::MutexLock lock(&mutex_);
    return writes_;
  }

 private:
  std::filesystem::path Host(const std::string& node_path) const {
    return root_ / std::string(absl::StripPrefix(node_path, "/"));
  }
  std::filesystem::path Device(const std::string& address) const {
    return std::filesystem::canonical(root_ / "sys/bus/pci/devices" / address);
  }

  const std::filesystem::path root_;
  absl::Mutex mutex_;
  std::vector<SysfsWrite> writes_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace wsched::agent::testing

#endif  // WSCHED_SERVER_AGENT_FAKE_KERNEL_TEST_UTIL_H_
