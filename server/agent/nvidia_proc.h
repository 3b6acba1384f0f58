// What the loaded NVIDIA kernel driver tells through sysfs, procfs and /dev.
#ifndef WSCHED_SERVER_AGENT_NVIDIA_PROC_H_
#define WSCHED_SERVER_AGENT_NVIDIA_PROC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/agent/rooted_fs.h"
#include "server/core/workspace_class.h"

namespace wsched::agent {

// The NVIDIA character devices use this fixed major; only nvidia-uvm's is
// dynamic (see /proc/devices).
inline constexpr int64_t kNvidiaMajor = 195;

// The version in the first line of /proc/driver/nvidia/version, e.g. from
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..."
// (also the "Open Kernel Module for x86_64" wording); empty if none is found.
std::string ParseProcDriverVersion(absl::string_view line);

// The loaded driver's version: /sys/module/nvidia/version, else
// /proc/driver/nvidia/version; empty when no driver is loaded.
absl::StatusOr<std::string> ReadDriverVersion(const RootedFs& fs);

// /proc/driver/nvidia/gpus/<address>/information, written by the driver.
struct GpuInformation {
  std::optional<int> device_minor;  // N of /dev/nvidiaN.
  std::string uuid;                 // "GPU-..."
  std::string model;                // "NVIDIA H100 80GB HBM3"
};
GpuInformation ParseGpuInformation(absl::string_view text);
// Empty when the file does not exist (driver not loaded, /proc/driver hidden).
absl::StatusOr<std::optional<GpuInformation>> ReadGpuInformation(const RootedFs& fs,
                                                                 absl::string_view address);

// Major of a character driver named in /proc/devices ("237 nvidia-uvm").
std::optional<int64_t> ParseCharDeviceMajor(absl::string_view proc_devices,
                                            absl::string_view driver);

// /dev/nvidia<index>, char 195:<index>.
core::DeviceNode GpuDeviceNode(int index);

// The shared control nodes (nvidiactl, nvidia-modeset, nvidia-uvm,
// nvidia-uvm-tools) that exist under <root>/dev. A real device node's own
// numbers win; fake trees use plain files and get the well-known numbers.
absl::StatusOr<std::vector<core::DeviceNode>> ReadControlDevices(const RootedFs& fs);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NVIDIA_PROC_H_
