#include "server/agent/nvidia_cdi_spec.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/core/cdi_names.h"
#include "yaml-cpp/yaml.h"

namespace wsched::agent {
namespace {

bool IsSpecFile(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  return ext == ".json" || ext == ".yaml" || ext == ".yml";
}

std::vector<std::filesystem::path> SpecFiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file(error) && IsSpecFile(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<NvidiaSpec> ParseDevices(const YAML::Node& doc, const std::string& file) {
  NvidiaSpec spec{file, {}};
  if (!doc["devices"] || !doc["devices"].IsSequence()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": kind nvidia.com/gpu without devices"));
  }
  for (const YAML::Node& device : doc["devices"]) {
    NvidiaSpecDevice out;
    if (device["name"]) out.name = device["name"].as<std::string>();
    const YAML::Node nodes = device["containerEdits"]["deviceNodes"];
    if (nodes && nodes.IsSequence()) {
      for (const YAML::Node& node : nodes) {
        if (node["path"]) out.device_nodes.push_back(node["path"].as<std::string>());
      }
    }
    spec.devices.push_back(std::move(out));
  }
  return spec;
}

constexpr char kCapsDir[] = "/dev/nvidia-caps/";

// Whether `device` gives the container the slice: its GPU's node, and of
// the capability nodes its own two and no other.
bool HoldsSliceAlone(const NvidiaSpecDevice& device, const core::Gpu& gpu,
                     const core::MigInstance& slice) {
  if (!slice.gi_access || !slice.ci_access) return false;
  std::vector<std::string> caps;
  for (const std::string& node : device.device_nodes) {
    if (absl::StartsWith(node, kCapsDir)) caps.push_back(node);
  }
  std::vector<std::string> own = {slice.gi_access->path, slice.ci_access->path};
  std::sort(caps.begin(), caps.end());
  std::sort(own.begin(), own.end());
  const std::string gpu_node = absl::StrCat("/dev/nvidia", gpu.index);
  return caps == own && std::find(device.device_nodes.begin(), device.device_nodes.end(),
                                  gpu_node) != device.device_nodes.end();
}

}  // namespace

absl::StatusOr<std::optional<NvidiaSpec>> FindNvidiaSpec(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    for (const std::filesystem::path& path : SpecFiles(dir)) {
      YAML::Node doc;
      try {
        doc = YAML::LoadFile(path.string());  // JSON is YAML too.
      } catch (const YAML::Exception&) {
        continue;
      }
      if (!doc.IsMap() || !doc["kind"] || doc["kind"].as<std::string>("") != core::kNvidiaGpuKind) {
        continue;
      }
      try {
        absl::StatusOr<NvidiaSpec> spec = ParseDevices(doc, path.string());
        if (!spec.ok()) return spec.status();
        return std::optional<NvidiaSpec>(*std::move(spec));
      } catch (const YAML::Exception& e) {
        return absl::InvalidArgumentError(absl::StrCat(path.string(), ": ", e.what()));
      }
    }
  }
  return std::optional<NvidiaSpec>();
}

NvidiaNames MatchNvidiaNames(const NvidiaSpec& spec, const std::vector<core::Gpu>& gpus) {
  NvidiaNames names;
  for (const core::Gpu& gpu : gpus) {
    const std::string node = absl::StrCat("/dev/nvidia", gpu.index);
    const NvidiaSpecDevice* by_index = nullptr;
    const NvidiaSpecDevice* by_uuid = nullptr;
    for (const NvidiaSpecDevice& device : spec.devices) {
      if (device.name == gpu.uuid) by_uuid = &device;
      if (device.name != "all" && device.device_nodes.size() == 1 && device.device_nodes[0] == node) {
        by_index = &device;
      }
    }
    const NvidiaSpecDevice* chosen = by_uuid != nullptr ? by_uuid : by_index;
    if (chosen != nullptr && core::IsCdiDeviceName(chosen->name)) {
      names.by_uuid[gpu.uuid] = core::CdiQualifiedName(core::kNvidiaGpuKind, chosen->name);
    } else {
      names.problems[gpu.uuid] = absl::StrCat(
          "GPU ", gpu.uuid, " (", node, ") is not in NVIDIA's CDI spec ", spec.file,
          "; regenerate it (nvidia-ctk cdi generate)");
    }
  }
  return names;
}

std::optional<std::string> MatchNvidiaSliceName(const NvidiaSpec& spec, const core::Gpu& gpu,
                                                const core::MigInstance& slice) {
  const NvidiaSpecDevice* by_uuid = nullptr;
  const NvidiaSpecDevice* by_nodes = nullptr;
  for (const NvidiaSpecDevice& device : spec.devices) {
    if (!slice.uuid.empty() && device.name == slice.uuid) by_uuid = &device;
    if (device.name != "all" && HoldsSliceAlone(device, gpu, slice)) by_nodes = &device;
  }
  const NvidiaSpecDevice* chosen = by_uuid != nullptr ? by_uuid : by_nodes;
  if (chosen == nullptr || !core::IsCdiDeviceName(chosen->name)) return std::nullopt;
  return core::CdiQualifiedName(core::kNvidiaGpuKind, chosen->name);
}

}  // namespace wsched::agent
