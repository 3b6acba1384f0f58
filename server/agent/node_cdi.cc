#include "server/agent/node_cdi.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/agent/cdi_spec.h"
#include "server/agent/driver_files.h"
#include "server/agent/nvidia_cdi_spec.h"
#include "server/agent/nvidia_mig.h"
#include "server/core/builtin_devices.h"
#include "server/core/cdi_names.h"
#include "server/core/node_validation.h"

namespace wsched::agent {
namespace {

constexpr size_t kMaxProblemLength = 512;

void PlanExtraDevices(const RootedFs& fs, const CdiOptions& options, NodeCdiPlan& plan) {
  // The devices a class can name (fuse, tun, kvm), where the node has them;
  // their numbers are fixed, and a fake tree's plain file takes them too.
  std::vector<NamedDevice> present;
  for (const core::BuiltinDevice& extra : core::BuiltinDevices()) {
    if (!fs.Exists(extra.node.path)) continue;
    core::DeviceNode node = extra.node;
    if (std::optional<DeviceNumbers> real = fs.CharDevice(node.path)) {
      node.major = real->major;
      node.minor = real->minor;
    }
    present.push_back({std::string(extra.name), node});
    plan.cdi.extra_devices.push_back(
        {node.path, core::CdiQualifiedName(core::kWschedDeviceKind, extra.name)});
  }
  if (present.empty()) {
    plan.remove.push_back(kDeviceSpecFile);
  } else {
    plan.write.push_back({kDeviceSpecFile, BuildDeviceSpec(present, options.host_root)});
  }
}

// The slices of the GPUs in MIG mode: a GPU with MIG off has none to hand
// out, whatever an earlier layout said.
template <typename Visit>
void ForEachSlice(const core::NodeInfo& node, Visit visit) {
  for (const core::Gpu& gpu : node.gpus) {
    if (!gpu.mig || !gpu.mig->enabled) continue;
    for (const core::MigInstance& slice : gpu.mig->instances) visit(gpu, slice);
  }
}

std::string DescribeSlice(const core::Gpu& gpu, const core::MigInstance& slice) {
  return absl::StrCat("MIG slice ", SliceKey(gpu, slice), " (GPU ", gpu.index, " GPU instance ",
                      slice.gpu_instance, ")");
}

// Why no spec can give the slice a device; nullopt for a usable slice.
std::optional<std::string> UnusableSliceProblem(const core::Gpu& gpu,
                                                const core::MigInstance& slice) {
  if (slice.compute_instance < 0) {
    return absl::StrCat(DescribeSlice(gpu, slice),
                        ": no one compute instance spans the GPU instance, so it is not a slice");
  }
  if (!slice.gi_access || !slice.ci_access) {
    const std::string file =
        slice.gi_access ? MigCapabilityPath(gpu.index, slice.gpu_instance, slice.compute_instance)
                        : MigCapabilityPath(gpu.index, slice.gpu_instance);
    return absl::StrCat(DescribeSlice(gpu, slice), ": no capability device node (", file,
                        " missing, or no nvidia-caps in /proc/devices)");
  }
  return std::nullopt;
}

// A usable slice without a device: the node should be fixed, so the node's
// CDI status says so too.
void UsableSliceHasNoDevice(const core::Gpu& gpu, const core::MigInstance& slice,
                            const std::string& why, NodeCdiPlan& plan) {
  std::string problem = absl::StrCat(DescribeSlice(gpu, slice), ": ", why);
  plan.cdi.problems.push_back(problem);
  plan.slice_problems[SliceKey(gpu, slice)] = std::move(problem);
}

// NVIDIA's spec is there: its names, or for a GPU or slice it lacks, the
// reason.
void PlanNvidia(const NvidiaSpec& spec, const core::NodeInfo& node, NodeCdiPlan& plan) {
  plan.cdi.mode = core::CdiMode::kNvidia;
  NvidiaNames names = MatchNvidiaNames(spec, node.gpus);
  plan.gpu_names = names.by_uuid;
  for (const auto& [uuid, problem] : names.problems) {
    plan.gpu_problems[uuid] = problem;
    plan.cdi.problems.push_back(problem);
  }
  ForEachSlice(node, [&](const core::Gpu& gpu, const core::MigInstance& slice) {
    if (std::optional<std::string> problem = UnusableSliceProblem(gpu, slice)) {
      plan.slice_problems[SliceKey(gpu, slice)] = *std::move(problem);
    } else if (std::optional<std::string> name = MatchNvidiaSliceName(spec, gpu, slice)) {
      plan.slice_names[SliceKey(gpu, slice)] = *std::move(name);
    } else {
      UsableSliceHasNoDevice(
          gpu, slice,
          absl::StrCat("not in NVIDIA's CDI spec ", spec.file,
                       "; regenerate it (nvidia-ctk cdi generate) after changing the slices"),
          plan);
    }
  });
  plan.remove.push_back(kGpuSpecFile);
}

// wsched's own devices for the usable slices, named by their MIG UUIDs;
// a slice without a UUID that is a CDI name, or whose UUID another slice
// reports too (one name defined twice makes a runtime refuse the whole
// spec), gets none.
std::vector<SliceDevice> PlanWschedSlices(const core::NodeInfo& node, NodeCdiPlan& plan) {
  std::map<std::string, int> reported;
  ForEachSlice(node, [&](const core::Gpu&, const core::MigInstance& slice) {
    if (!slice.uuid.empty()) ++reported[slice.uuid];
  });
  std::vector<SliceDevice> devices;
  ForEachSlice(node, [&](const core::Gpu& gpu, const core::MigInstance& slice) {
    if (std::optional<std::string> problem = UnusableSliceProblem(gpu, slice)) {
      plan.slice_problems[SliceKey(gpu, slice)] = *std::move(problem);
    } else if (slice.uuid.empty()) {
      UsableSliceHasNoDevice(gpu, slice, "no MIG UUID (nvidia-smi -L or -q failed)", plan);
    } else if (!core::IsCdiDeviceName(slice.uuid)) {
      UsableSliceHasNoDevice(
          gpu, slice,
          "its MIG UUID is not a CDI device name (a driver before R470 names slices so)", plan);
    } else if (reported[slice.uuid] > 1) {
      UsableSliceHasNoDevice(gpu, slice, "another slice reports the same MIG UUID", plan);
    } else {
      plan.slice_names[SliceKey(gpu, slice)] =
          core::CdiQualifiedName(core::kWschedGpuKind, slice.uuid);
      devices.push_back({slice.uuid, gpu.index, *slice.gi_access, *slice.ci_access});
    }
  });
  return devices;
}

void PlanWsched(const RootedFs& fs, const core::NodeInfo& node, const CdiOptions& options,
                NodeCdiPlan& plan) {
  plan.cdi.mode = core::CdiMode::kWsched;
  if (node.gpus.empty()) {
    plan.remove.push_back(kGpuSpecFile);
    return;
  }
  DriverFiles files = DiscoverDriverFiles(fs, node.driver_version);
  if (node.driver_version.empty()) files.problems.push_back("no NVIDIA driver is loaded");
  if (!files.problems.empty()) {
    // No partial spec: a container that starts without libcuda fails later
    // and more obscurely than a GPU that is not handed out.
    plan.cdi.problems = files.problems;
    WithholdAll(node, absl::StrCat("CDI: ", absl::StrJoin(files.problems, "; ")), plan);
    plan.remove.push_back(kGpuSpecFile);
    return;
  }
  for (const core::Gpu& gpu : node.gpus) {
    plan.gpu_names[gpu.uuid] = core::CdiQualifiedName(core::kWschedGpuKind, gpu.uuid);
  }
  std::vector<SliceDevice> slices = PlanWschedSlices(node, plan);
  plan.write.push_back({kGpuSpecFile, BuildGpuSpec(node, files, options.host_root, slices)});
}

// The file's content; nullopt when there is none (or it cannot be read:
// then it is written anew, which reports the real error).
std::optional<std::string> ReadIfExists(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status WriteAtomically(const std::filesystem::path& path, const std::string& content) {
  // The temporary name has no .json/.yaml suffix: runtimes watching the
  // directory ignore it.
  std::filesystem::path temp = path;
  temp += ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat("writing ", temp.string(), " failed"));
  }
  std::error_code error;
  std::filesystem::permissions(temp, std::filesystem::perms(0644), error);
  std::filesystem::rename(temp, path, error);
  if (error) {
    return absl::InternalError(absl::StrCat("renaming ", temp.string(), " to ", path.string(),
                                            ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace

std::string SliceKey(const core::Gpu& gpu, const core::MigInstance& slice) {
  return slice.uuid.empty() ? absl::StrCat(gpu.uuid, "/gi", slice.gpu_instance) : slice.uuid;
}

void WithholdAll(const core::NodeInfo& node, const std::string& problem, NodeCdiPlan& plan) {
  plan.gpu_names.clear();
  plan.slice_names.clear();
  for (const core::Gpu& gpu : node.gpus) plan.gpu_problems[gpu.uuid] = problem;
  ForEachSlice(node, [&](const core::Gpu& gpu, const core::MigInstance& slice) {
    plan.slice_problems[SliceKey(gpu, slice)] = problem;
  });
}

NodeCdiPlan PlanNodeCdi(const RootedFs& fs, const core::NodeInfo& node, const CdiOptions& options) {
  NodeCdiPlan plan;
  if (options.spec_dir.empty()) return plan;  // CDI off: inline answers.
  plan.cdi.spec_dir = options.spec_dir;
  absl::StatusOr<std::optional<NvidiaSpec>> nvidia = FindNvidiaSpec(options.nvidia_spec_dirs);
  if (!nvidia.ok()) {
    // The node has a spec of NVIDIA's kind that cannot be read: writing our
    // own beside it would not help (the runtime refuses the kind), so no GPU
    // goes out until it is fixed.
    plan.cdi.mode = core::CdiMode::kNvidia;
    plan.cdi.problems.push_back(std::string(nvidia.status().message()));
    WithholdAll(node, absl::StrCat("CDI: ", nvidia.status().message()), plan);
    plan.remove.push_back(kGpuSpecFile);
  } else if (nvidia->has_value() && !node.gpus.empty()) {
    PlanNvidia(**nvidia, node, plan);
  } else {
    PlanWsched(fs, node, options, plan);
  }
  PlanExtraDevices(fs, options, plan);
  return plan;
}

absl::Status SyncSpecFiles(const std::string& dir, const NodeCdiPlan& plan) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::InternalError(absl::StrCat("creating ", dir, ": ", error.message()));
  for (const SpecFile& file : plan.write) {
    std::filesystem::path path = std::filesystem::path(dir) / file.name;
    if (ReadIfExists(path) == file.content) continue;
    if (absl::Status status = WriteAtomically(path, file.content); !status.ok()) return status;
  }
  for (const std::string& name : plan.remove) {
    std::filesystem::remove(std::filesystem::path(dir) / name, error);
    if (error) return absl::InternalError(absl::StrCat("removing ", name, ": ", error.message()));
  }
  return absl::OkStatus();
}

void ApplyNodeCdi(const NodeCdiPlan& plan, core::NodeInfo& node) {
  node.cdi = plan.cdi;
  // Within what the server accepts (core/node_validation.h); the GPUs'
  // health reasons carry the rest.
  if (node.cdi.problems.size() > core::kMaxCdiProblems) node.cdi.problems.resize(core::kMaxCdiProblems);
  for (std::string& problem : node.cdi.problems) problem = problem.substr(0, kMaxProblemLength);
  for (core::Gpu& gpu : node.gpus) {
    auto name = plan.gpu_names.find(gpu.uuid);
    gpu.cdi_device = name == plan.gpu_names.end() ? "" : name->second;
    if (!gpu.mig) continue;
    for (core::MigInstance& slice : gpu.mig->instances) {
      auto slice_name = plan.slice_names.find(SliceKey(gpu, slice));
      slice.cdi_device = slice_name == plan.slice_names.end() ? "" : slice_name->second;
    }
  }
}

}  // namespace wsched::agent
