#include "server/agent/nvidia_proc.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wsched::agent {
namespace {

// "550.54.15", "535.104.05", "470.57": digits separated by single dots.
bool LooksLikeDriverVersion(absl::string_view token) {
  if (token.empty() || !absl::ascii_isdigit(token.front()) ||
      !absl::ascii_isdigit(token.back()) || !absl::StrContains(token, '.')) {
    return false;
  }
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '.' && token[i - 1] == '.') return false;
    if (token[i] != '.' && !absl::ascii_isdigit(token[i])) return false;
  }
  return true;
}

struct ControlDevice {
  const char* path;
  const char* proc_devices_name;  // Dynamic major looked up here; null: 195.
  int64_t minor;
};

constexpr ControlDevice kControlDevices[] = {
    {"/dev/nvidiactl", nullptr, 255},
    {"/dev/nvidia-modeset", nullptr, 254},
    {"/dev/nvidia-uvm", "nvidia-uvm", 0},
    {"/dev/nvidia-uvm-tools", "nvidia-uvm", 1},
};

}  // namespace

std::string ParseProcDriverVersion(absl::string_view line) {
  if (!absl::ConsumePrefix(&line, "NVRM version:")) return "";
  for (absl::string_view token : absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    if (LooksLikeDriverVersion(token)) return std::string(token);
  }
  return "";
}

absl::StatusOr<std::string> ReadDriverVersion(const RootedFs& fs) {
  absl::StatusOr<std::string> version = fs.ReadTrimmed("/sys/module/nvidia/version");
  if (version.ok() && !version->empty()) return version;
  if (!version.ok() && !absl::IsNotFound(version.status())) return version.status();

  absl::StatusOr<std::string> text = fs.ReadFile("/proc/driver/nvidia/version");
  if (absl::IsNotFound(text.status())) return std::string();
  if (!text.ok()) return text.status();
  absl::string_view first_line = absl::string_view(*text).substr(0, text->find('\n'));
  std::string parsed = ParseProcDriverVersion(first_line);
  if (parsed.empty()) {
    return absl::DataLossError(absl::StrCat(fs.root(),
                                            "/proc/driver/nvidia/version: no version in \"",
                                            first_line, "\""));
  }
  return parsed;
}

GpuInformation ParseGpuInformation(absl::string_view text) {
  GpuInformation info;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    // "GPU UUID: \t GPU-6f1e..." - key and value separated by ':' and blanks.
    std::vector<absl::string_view> key_value = absl::StrSplit(line, absl::MaxSplits(':', 1));
    if (key_value.size() != 2) continue;
    absl::string_view key = absl::StripAsciiWhitespace(key_value[0]);
    absl::string_view value = absl::StripAsciiWhitespace(key_value[1]);
    if (key == "Model") info.model = std::string(value);
    if (key == "GPU UUID") info.uuid = std::string(value);
    int minor = 0;
    if (key == "Device Minor" && absl::SimpleAtoi(value, &minor) && minor >= 0) {
      info.device_minor = minor;
    }
  }
  return info;
}

absl::StatusOr<std::optional<GpuInformation>> ReadGpuInformation(const RootedFs& fs,
                                                                 absl::string_view address) {
  absl::StatusOr<std::string> text =
      fs.ReadFile(absl::StrCat("/proc/driver/nvidia/gpus/", address, "/information"));
  if (absl::IsNotFound(text.status())) return std::optional<GpuInformation>();
  if (!text.ok()) return text.status();
  return std::optional<GpuInformation>(ParseGpuInformation(*text));
}

// Linux's device majors are 12 bits (MINORBITS 20 of a 32-bit dev_t).
constexpr int64_t kMaxDeviceMajor = 4095;

std::optional<int64_t> ParseCharDeviceMajor(absl::string_view proc_devices,
                                            absl::string_view driver) {
  bool in_char_section = false;
  for (absl::string_view line : absl::StrSplit(proc_devices, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line == "Character devices:") {
      in_char_section = true;
      continue;
    }
    if (line == "Block devices:") in_char_section = false;
    if (!in_char_section) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    int64_t major = 0;
    // A device major is 12 bits (0..4095); anything else is no entry.
    if (fields.size() == 2 && fields[1] == driver && absl::SimpleAtoi(fields[0], &major) &&
        major >= 0 && major <= kMaxDeviceMajor) {
      return major;
    }
  }
  return std::nullopt;
}

core::DeviceNode GpuDeviceNode(int index) {
  return core::DeviceNode{.path = absl::StrCat("/dev/nvidia", index),
                          .type = 'c',
                          .major = kNvidiaMajor,
                          .minor = index};
}

absl::StatusOr<std::vector<core::DeviceNode>> ReadControlDevices(const RootedFs& fs) {
  std::optional<std::string> proc_devices;  // Read only if a dynamic major is needed.
  std::vector<core::DeviceNode> devices;
  for (const ControlDevice& control : kControlDevices) {
    if (!fs.Exists(control.path)) continue;
    core::DeviceNode node{.path = control.path, .type = 'c', .major = kNvidiaMajor,
                          .minor = control.minor};
    if (std::optional<DeviceNumbers> real = fs.CharDevice(control.path)) {
      node.major = real->major;
      node.minor = real->minor;
    } else if (control.proc_devices_name != nullptr) {
      if (!proc_devices) {
        absl::StatusOr<std::string> text = fs.ReadFile("/proc/devices");
        if (!text.ok() && !absl::IsNotFound(text.status())) return text.status();
        proc_devices = text.ok() ? *std::move(text) : std::string();
      }
      std::optional<int64_t> major = ParseCharDeviceMajor(*proc_devices, control.proc_devices_name);
      // A node left behind in /dev after the module was unloaded cannot be
      // opened; handing it to a workspace would only hide the real problem.
      if (!major) continue;
      node.major = *major;
    }
    devices.push_back(std::move(node));
  }
  return devices;
}

}  // namespace wsched::agent
