#include "server/agent/cdi_spec.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "server/core/cdi_names.h"

namespace wsched::agent {
namespace {

using Json = nlohmann::ordered_json;  // Field order kept: readable, stable files.

constexpr int kNvidiaMajor = 195;  // /dev/nvidia<N> is char 195:N.

Json DeviceNodeJson(const core::DeviceNode& device, const std::string& host_root) {
  Json json;
  json["path"] = device.path;
  json["hostPath"] = HostPath(host_root, device.path);
  json["type"] = std::string(1, device.type);
  json["major"] = device.major;
  json["minor"] = device.minor;
  if (!device.permissions.empty()) json["permissions"] = device.permissions;
  return json;
}

Json MountJson(const std::string& host_path, const std::string& container_path,
               std::vector<std::string> options) {
  Json json;
  json["hostPath"] = host_path;
  json["containerPath"] = container_path;
  json["options"] = std::move(options);
  return json;
}

Json ReadOnlyMount(const std::string& host_root, const std::string& node_path) {
  return MountJson(HostPath(host_root, node_path), node_path, {"ro", "nosuid", "nodev", "bind"});
}

Json HookJson(const DriverFiles& files, const std::string& host_root,
              std::vector<std::string> args) {
  std::vector<std::string> argv = files.hook.argv;
  argv.insert(argv.end(), args.begin(), args.end());
  Json json;
  json["hookName"] = "createContainer";
  json["path"] = HostPath(host_root, files.hook.path);
  json["args"] = std::move(argv);
  return json;
}

// /dev/nvidia<N>, char 195:N. Read-write without mknod, for a GPU and its
// slices' capability nodes alike.
core::DeviceNode GpuDeviceNode(int index) {
  return {absl::StrCat("/dev/nvidia", index), 'c', kNvidiaMajor, index, "rw"};
}

core::DeviceNode Accessible(core::DeviceNode node) {
  node.permissions = "rw";
  return node;
}

// The slice's GPU and its own two capability nodes, never another slice's:
// the driver lets a process into a GPU instance and a compute instance only
// through their capability nodes, so a container holding these two can use
// that slice and no other. NVIDIA_VISIBLE_DEVICES names it the way NVIDIA's
// images and container tools expect.
Json SliceDeviceJson(const SliceDevice& slice, const std::string& host_root) {
  Json entry;
  entry["name"] = slice.uuid;
  entry["containerEdits"]["env"] =
      Json::array({absl::StrCat("NVIDIA_VISIBLE_DEVICES=", slice.uuid)});
  entry["containerEdits"]["deviceNodes"] =
      Json::array({DeviceNodeJson(GpuDeviceNode(slice.gpu_index), host_root),
                   DeviceNodeJson(Accessible(slice.gi_access), host_root),
                   DeviceNodeJson(Accessible(slice.ci_access), host_root)});
  return entry;
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The libraries at the node's paths; the hook then makes the soname links
// and adds their directories to the container's own linker cache, so any
// image's linker finds them (a Debian image does not search /usr/lib64, a
// RHEL one not /usr/lib/x86_64-linux-gnu).
void AddLibraries(const DriverFiles& files, const std::string& host_root, Json& edits) {
  std::vector<std::string> links = {"create-symlinks"};
  for (const DriverLibrary& library : files.libraries) {
    edits["mounts"].push_back(ReadOnlyMount(host_root, library.path));
    if (library.soname_path.empty()) continue;
    links.push_back("--link");
    links.push_back(absl::StrCat(BaseName(library.path), "::", library.soname_path));
  }
  if (links.size() > 1) edits["hooks"].push_back(HookJson(files, host_root, links));
  std::vector<std::string> ldcache = {"update-ldcache"};
  for (const std::string& dir : files.library_dirs) {
    ldcache.push_back("--folder");
    ldcache.push_back(dir);
  }
  edits["hooks"].push_back(HookJson(files, host_root, ldcache));
}

}  // namespace

std::string HostPath(const std::string& host_root, const std::string& node_path) {
  absl::string_view root = absl::StripSuffix(host_root, "/");
  return absl::StrCat(root, node_path);
}

std::string BuildGpuSpec(const core::NodeInfo& node, const DriverFiles& files,
                         const std::string& host_root, const std::vector<SliceDevice>& slices) {
  Json devices = Json::array();
  for (const core::Gpu& gpu : node.gpus) {
    Json entry;
    entry["name"] = gpu.uuid;
    entry["containerEdits"]["deviceNodes"] =
        Json::array({DeviceNodeJson(GpuDeviceNode(gpu.index), host_root)});
    devices.push_back(std::move(entry));
  }
  for (const SliceDevice& slice : slices) devices.push_back(SliceDeviceJson(slice, host_root));
  Json edits;
  edits["deviceNodes"] = Json::array();
  for (const core::DeviceNode& control : node.control_devices) {
    edits["deviceNodes"].push_back(DeviceNodeJson(control, host_root));
  }
  edits["mounts"] = Json::array();
  AddLibraries(files, host_root, edits);
  for (const std::string& utility : files.utilities) {
    edits["mounts"].push_back(ReadOnlyMount(host_root, utility));
  }
  if (!files.firmware_dir.empty()) edits["mounts"].push_back(ReadOnlyMount(host_root, files.firmware_dir));
  for (const std::string& socket : files.sockets) {
    edits["mounts"].push_back(
        MountJson(HostPath(host_root, socket), socket, {"ro", "nosuid", "nodev", "bind", "noexec"}));
  }
  Json spec;
  spec["cdiVersion"] = core::kCdiVersion;
  spec["kind"] = core::kWschedGpuKind;
  spec["devices"] = std::move(devices);
  spec["containerEdits"] = std::move(edits);
  return spec.dump(2) + "\n";
}

std::string BuildDeviceSpec(const std::vector<NamedDevice>& devices, const std::string& host_root) {
  Json entries = Json::array();
  for (const NamedDevice& device : devices) {
    Json entry;
    entry["name"] = device.name;
    entry["containerEdits"]["deviceNodes"] = Json::array({DeviceNodeJson(device.node, host_root)});
    entries.push_back(std::move(entry));
  }
  Json spec;
  spec["cdiVersion"] = core::kCdiVersion;
  spec["kind"] = core::kWschedDeviceKind;
  spec["devices"] = std::move(entries);
  return spec.dump(2) + "\n";
}

}  // namespace wsched::agent
