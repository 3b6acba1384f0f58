#include "server/agent/node_cdi.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/agent/discovery.h"
#include "server/agent/driver_files.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ScratchDir;
using testing::Tree;
using Json = nlohmann::json;

constexpr char kDriver[] = "550.54.15";
constexpr char kLibDir[] = "/usr/lib/x86_64-linux-gnu";

core::NodeInfo Discover(const std::string& root) {
  DiscoveryOptions options;
  options.root = root;
  options.pool = "gpu-h100";
  absl::StatusOr<core::NodeInfo> node = DiscoverNode(options);
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? *node : core::NodeInfo{};
}

// A writable copy of the H100 tree, to break in one way per test.
fs::path CopyOfH100(const ScratchDir& scratch) {
  fs::path root = scratch.path() / "root";
  fs::copy(Tree("h100-8gpu"), root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  return root;
}

CdiOptions Options(const fs::path& spec_dir, const std::string& host_root) {
  return {spec_dir.string(), {(spec_dir.parent_path() / "nvidia-cdi").string()}, host_root};
}

const SpecFile* Find(const NodeCdiPlan& plan, const std::string& name) {
  for (const SpecFile& file : plan.write) {
    if (file.name == name) return &file;
  }
  return nullptr;
}

Json GpuSpec(const NodeCdiPlan& plan) {
  const SpecFile* file = Find(plan, kGpuSpecFile);
  EXPECT_NE(file, nullptr);
  return file == nullptr ? Json() : Json::parse(file->content);
}

std::vector<std::string> ContainerPaths(const Json& spec) {
  std::vector<std::string> paths;
  for (const Json& mount : spec["containerEdits"]["mounts"]) paths.push_back(mount["containerPath"]);
  return paths;
}

TEST(DriverFiles, FindsLibrariesUtilitiesFirmwareAndSocketsOfTheLoadedDriver) {
  DriverFiles files = DiscoverDriverFiles(RootedFs(Tree("h100-8gpu")), kDriver);
  EXPECT_THAT(files.problems, IsEmpty());
  std::vector<std::string> libraries;
  for (const DriverLibrary& library : files.libraries) libraries.push_back(library.path);
  EXPECT_THAT(libraries, Contains(std::string(kLibDir) + "/libcuda.so.550.54.15"));
  EXPECT_THAT(libraries, Contains(std::string(kLibDir) + "/libnvidia-ml.so.550.54.15"));
  EXPECT_THAT(libraries, Contains(std::string(kLibDir) + "/libnvidia-nvvm.so.550.54.15"));
  // /lib/x86_64-linux-gnu and the ld.so.conf.d entry name no other directory.
  EXPECT_THAT(files.library_dirs, ElementsAre(kLibDir));
  EXPECT_THAT(files.utilities, ElementsAre("/usr/bin/nvidia-smi", "/usr/bin/nvidia-debugdump"));
  EXPECT_EQ(files.firmware_dir, "/lib/firmware/nvidia/550.54.15");
  EXPECT_THAT(files.sockets, ElementsAre("/run/nvidia-persistenced/socket"));
  EXPECT_TRUE(files.hook.path.empty());
}

TEST(DriverFiles, AnotherDriverVersionFindsNothingOfThisOne) {
  DriverFiles files = DiscoverDriverFiles(RootedFs(Tree("h100-8gpu")), "560.35.03");
  EXPECT_TRUE(files.libraries.empty());
  EXPECT_TRUE(files.firmware_dir.empty());
  EXPECT_THAT(files.problems,
              ElementsAre("libnvidia-ml.so is 550.54.15 but the loaded driver is 560.35.03 "
                          "(reboot or reload the driver after an upgrade)",
                          HasSubstr("libcuda.so is 550.54.15 but the loaded driver is 560.35.03")));
}

TEST(NodeCdi, WritesAWschedSpecWithEveryGpuAndWhatCudaNeeds) {
  const std::string root = Tree("h100-8gpu");
  core::NodeInfo node = Discover(root);
  ScratchDir scratch;
  NodeCdiPlan plan = PlanNodeCdi(RootedFs(root), node, Options(scratch.path() / "cdi", root));

  EXPECT_EQ(plan.cdi.mode, core::CdiMode::kWsched);
  EXPECT_THAT(plan.cdi.problems, IsEmpty());
  EXPECT_THAT(plan.gpu_problems, IsEmpty());
  ASSERT_EQ(plan.gpu_names.size(), 8u);
  EXPECT_EQ(plan.gpu_names.at(node.gpus[0].uuid), "wsched.io/gpu=" + node.gpus[0].uuid);

  Json spec = GpuSpec(plan);
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");
  EXPECT_EQ(spec["kind"], "wsched.io/gpu");
  ASSERT_EQ(spec["devices"].size(), 8u);
  const Json& gpu3 = spec["devices"][3]["containerEdits"]["deviceNodes"][0];
  EXPECT_EQ(spec["devices"][3]["name"], node.gpus[3].uuid);
  EXPECT_EQ(gpu3["path"], "/dev/nvidia3");
  EXPECT_EQ(gpu3["hostPath"], root + "/dev/nvidia3");  // Seen from the host root given.
  EXPECT_EQ(gpu3["major"], 195);
  EXPECT_EQ(gpu3["minor"], 3);
  std::vector<std::string> controls;
  for (const Json& device : spec["containerEdits"]["deviceNodes"]) controls.push_back(device["path"]);
  EXPECT_THAT(controls, Contains("/dev/nvidiactl"));
  EXPECT_THAT(controls, Contains("/dev/nvidia-uvm"));

  std::vector<std::string> mounts = ContainerPaths(spec);
  EXPECT_THAT(mounts, Contains(std::string(kLibDir) + "/libcuda.so.550.54.15"));
  // No hook installed: the library is bound at its soname too.
  EXPECT_THAT(mounts, Contains(std::string(kLibDir) + "/libcuda.so.1"));
  EXPECT_THAT(mounts, Contains("/usr/bin/nvidia-smi"));
  EXPECT_THAT(mounts, Contains("/lib/firmware/nvidia/550.54.15"));
  EXPECT_THAT(mounts, Contains("/run/nvidia-persistenced/socket"));
  EXPECT_FALSE(spec["containerEdits"].contains("hooks"));
  EXPECT_FALSE(spec["containerEdits"].contains("env"))
      << "NVIDIA_VISIBLE_DEVICES is per workspace: it comes with the placement answer";

  ASSERT_EQ(plan.cdi.extra_devices.size(), 2u);
  EXPECT_EQ(plan.cdi.extra_devices[0].name, "wsched.io/device=fuse");
  EXPECT_EQ(plan.cdi.extra_devices[1].path, "/dev/net/tun");
  const SpecFile* devices = Find(plan, kDeviceSpecFile);
  ASSERT_NE(devices, nullptr);
  EXPECT_EQ(Json::parse(devices->content)["kind"], "wsched.io/device");

  ApplyNodeCdi(plan, node);
  EXPECT_EQ(node.cdi.spec_dir, (scratch.path() / "cdi").string());
  EXPECT_EQ(node.gpus[7].cdi_device, "wsched.io/gpu=" + node.gpus[7].uuid);
}

TEST(NodeCdi, UsesNvidiasHookForSymlinksAndTheLinkerCacheWhenInstalled) {
  ScratchDir scratch;
  fs::path root = CopyOfH100(scratch);
  std::ofstream(root / "usr/bin/nvidia-cdi-hook") << "#!/bin/sh\n";
  NodeCdiPlan plan = PlanNodeCdi(RootedFs(root.string()), Discover(root.string()),
                                 Options(scratch.path() / "cdi", "/"));
  Json spec = GpuSpec(plan);
  ASSERT_EQ(spec["containerEdits"]["hooks"].size(), 2u);
  const Json& links = spec["containerEdits"]["hooks"][0];
  EXPECT_EQ(links["hookName"], "createContainer");
  EXPECT_EQ(links["path"], "/usr/bin/nvidia-cdi-hook");  // Host root "/": paths as the node has them.
  EXPECT_THAT(links["args"].get<std::vector<std::string>>(),
              Contains("libcuda.so.550.54.15::/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  EXPECT_THAT(spec["containerEdits"]["hooks"][1]["args"].get<std::vector<std::string>>(),
              ElementsAre("nvidia-cdi-hook", "update-ldcache", "--folder", kLibDir));
  EXPECT_THAT(ContainerPaths(spec), ::testing::Not(Contains(std::string(kLibDir) + "/libcuda.so.1")));
}

TEST(NodeCdi, LibrariesOfAnotherDriverMeanNoSpecAndNoGpuHandedOut) {
  ScratchDir scratch;
  fs::path root = CopyOfH100(scratch);
  fs::path lib = root / "usr/lib/x86_64-linux-gnu";
  fs::rename(lib / "libcuda.so.550.54.15", lib / "libcuda.so.535.104.05");
  core::NodeInfo node = Discover(root.string());
  NodeCdiPlan plan = PlanNodeCdi(RootedFs(root.string()), node, Options(scratch.path() / "cdi", "/"));

  EXPECT_EQ(plan.cdi.mode, core::CdiMode::kWsched);
  EXPECT_THAT(plan.cdi.problems,
              ElementsAre(HasSubstr("libcuda.so is 535.104.05 but the loaded driver is 550.54.15")));
  EXPECT_EQ(Find(plan, kGpuSpecFile), nullptr) << "no partial spec";
  EXPECT_THAT(plan.remove, Contains(kGpuSpecFile));
  EXPECT_TRUE(plan.gpu_names.empty());
  ASSERT_EQ(plan.gpu_problems.size(), 8u);
  EXPECT_THAT(plan.gpu_problems.at(node.gpus[0].uuid), HasSubstr("CDI: libcuda.so is 535.104.05"));
}

TEST(NodeCdi, AMissingLibraryNamesWhereItWasLookedFor) {
  ScratchDir scratch;
  fs::path root = CopyOfH100(scratch);
  fs::remove(root / "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
  NodeCdiPlan plan = PlanNodeCdi(RootedFs(root.string()), Discover(root.string()),
                                 Options(scratch.path() / "cdi", "/"));
  EXPECT_THAT(plan.cdi.problems,
              ElementsAre("libnvidia-ml.so.550.54.15 not found in /usr/lib/x86_64-linux-gnu, /usr/lib"));
}

TEST(NodeCdi, AnswersWithNvidiasNamesAndFlagsTheGpusItsSpecLacks) {
  const std::string root = Tree("h100-8gpu");
  core::NodeInfo node = Discover(root);
  ScratchDir scratch;
  CdiOptions options = Options(scratch.path() / "cdi", root);
  fs::create_directories(options.nvidia_spec_dirs[0]);
  // What `nvidia-ctk cdi generate` writes: YAML, devices named by index,
  // here one by UUID, and GPU 7 missing (added after the spec was made).
  std::ofstream spec(fs::path(options.nvidia_spec_dirs[0]) / "nvidia.yaml");
  spec << "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n";
  spec << "- name: " << node.gpus[0].uuid << "\n  containerEdits:\n    deviceNodes:\n"
       << "    - path: /dev/nvidia0\n";
  for (int i = 1; i < 7; ++i) {
    spec << "- name: \"" << i << "\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia"
         << i << "\n";
  }
  spec << "- name: all\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia7\n";
  spec.close();
  std::ofstream(fs::path(options.nvidia_spec_dirs[0]) / "other.json") << "{\"kind\": \"example.com/x\"}";

  NodeCdiPlan plan = PlanNodeCdi(RootedFs(root), node, options);
  EXPECT_EQ(plan.cdi.mode, core::CdiMode::kNvidia);
  EXPECT_EQ(plan.gpu_names.at(node.gpus[0].uuid), "nvidia.com/gpu=" + node.gpus[0].uuid);
  EXPECT_EQ(plan.gpu_names.at(node.gpus[5].uuid), "nvidia.com/gpu=5");
  EXPECT_FALSE(plan.gpu_names.contains(node.gpus[7].uuid)) << "\"all\" is never one GPU's name";
  EXPECT_THAT(plan.gpu_problems.at(node.gpus[7].uuid),
              HasSubstr("(/dev/nvidia7) is not in NVIDIA's CDI spec"));
  EXPECT_EQ(Find(plan, kGpuSpecFile), nullptr) << "nothing of a second GPU kind is written";
  EXPECT_THAT(plan.remove, Contains(kGpuSpecFile));
  EXPECT_NE(Find(plan, kDeviceSpecFile), nullptr) << "fuse and tun still come from wsched's kind";
}

TEST(NodeCdi, OffWithoutASpecDirectory) {
  const std::string root = Tree("h100-8gpu");
  NodeCdiPlan plan = PlanNodeCdi(RootedFs(root), Discover(root), CdiOptions{});
  EXPECT_EQ(plan.cdi, core::NodeCdi{});
  EXPECT_TRUE(plan.write.empty());
  EXPECT_TRUE(plan.remove.empty());
}

ino_t Inode(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  return info.st_ino;
}

TEST(SyncSpecFiles, WritesByRenameOnlyWhatChangedAndRemovesStaleFiles) {
  ScratchDir scratch;
  fs::path dir = scratch.path() / "cdi";
  NodeCdiPlan plan;
  plan.write = {{kGpuSpecFile, "{\"v\": 1}\n"}, {kDeviceSpecFile, "{\"d\": 1}\n"}};
  ASSERT_TRUE(SyncSpecFiles(dir.string(), plan).ok());
  ino_t gpu_inode = Inode(dir / kGpuSpecFile);
  ino_t device_inode = Inode(dir / kDeviceSpecFile);

  plan.write[0].content = "{\"v\": 2}\n";  // A driver upgrade changes the GPU spec only.
  ASSERT_TRUE(SyncSpecFiles(dir.string(), plan).ok());
  std::ifstream in(dir / kGpuSpecFile);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"v\": 2}\n");
  EXPECT_NE(Inode(dir / kGpuSpecFile), gpu_inode) << "replaced by rename, never rewritten in place";
  EXPECT_EQ(Inode(dir / kDeviceSpecFile), device_inode) << "unchanged content is not rewritten";

  plan.write.resize(1);
  plan.remove = {kDeviceSpecFile};
  ASSERT_TRUE(SyncSpecFiles(dir.string(), plan).ok());
  EXPECT_FALSE(fs::exists(dir / kDeviceSpecFile));
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().filename());
  EXPECT_THAT(left, ElementsAre(kGpuSpecFile)) << "no temporary file is left behind";
}

}  // namespace
}  // namespace wsched::agent
