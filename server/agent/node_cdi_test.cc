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
#include "server/agent/elf_identity.h"
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
constexpr std::string_view kLibDir = "/usr/lib/x86_64-linux-gnu";

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
  // No NVIDIA toolkit on the node: wsched's own hook, installed with the agent.
  EXPECT_EQ(files.hook.path, "/usr/local/bin/wsched-cdi-hook");
  EXPECT_THAT(files.hook.argv, ElementsAre("wsched-cdi-hook"));
}

// An ELF header of `elf_class` (1: 32-bit, 2: 64-bit) and `machine`, then
// `marker`: what the agent reads of a library.
std::string ElfFile(int elf_class, uint16_t machine, const std::string& marker) {
  std::string head(64, '\0');
  head.replace(0, 4, "\x7f" "ELF");
  head[4] = static_cast<char>(elf_class);
  head[5] = 1;  // Little-endian.
  head[6] = 1;
  head[18] = static_cast<char>(machine & 0xff);
  head[19] = static_cast<char>(machine >> 8);
  return head + marker;
}

// Rocky 9 with multilib packages: 64-bit libraries in /usr/lib64 and
// /usr/lib64/nvidia, 32-bit copies of the same names in /usr/lib and
// /usr/lib/nvidia, and nvidia-lib.conf sorting before nvidia-lib64.conf.
fs::path MultilibTree(const ScratchDir& scratch) {
  fs::path root = CopyOfH100(scratch);
  fs::remove_all(root / "usr/lib/x86_64-linux-gnu");
  fs::remove(root / "etc/ld.so.conf.d/x86_64-linux-gnu.conf");
  for (const char* dir : {"usr/lib64/nvidia", "usr/lib/nvidia"}) fs::create_directories(root / dir);
  std::ofstream(root / "etc/ld.so.conf.d/nvidia-lib.conf") << "/usr/lib/nvidia\n";
  std::ofstream(root / "etc/ld.so.conf.d/nvidia-lib64.conf") << "/usr/lib64/nvidia\n";
  for (const char* stem : {"libcuda.so", "libnvidia-ml.so"}) {
    std::string file = std::string(stem) + "." + kDriver;
    std::ofstream(root / "usr/lib" / file) << ElfFile(1, 3, "i686");
    std::ofstream(root / "usr/lib64" / file) << ElfFile(2, 62, "x86-64");
  }
  std::string glx = std::string("libGLX_nvidia.so.") + kDriver;
  std::ofstream(root / "usr/lib/nvidia" / glx) << ElfFile(1, 3, "i686");
  std::ofstream(root / "usr/lib64/nvidia" / glx) << ElfFile(2, 62, "x86-64");
  return root;
}

TEST(DriverFiles, MultilibNodeGetsOnlyItsSixtyFourBitLibrariesWhateverTheDirectoryOrder) {
  ScratchDir scratch;
  fs::path root = MultilibTree(scratch);
  DriverFiles files = DiscoverDriverFiles(RootedFs(root.string()), kDriver);
  EXPECT_THAT(files.problems, IsEmpty());
  std::vector<std::string> libraries;
  for (const DriverLibrary& library : files.libraries) libraries.push_back(library.path);
  EXPECT_THAT(libraries, ElementsAre(std::string("/usr/lib64/libnvidia-ml.so.") + kDriver,
                                     std::string("/usr/lib64/libcuda.so.") + kDriver,
                                     std::string("/usr/lib64/nvidia/libGLX_nvidia.so.") + kDriver));
  EXPECT_THAT(files.library_dirs, ElementsAre("/usr/lib64", "/usr/lib64/nvidia"));
}

TEST(DriverFiles, ALibraryOfTheWrongClassOrMachineInAnEarlierDirectoryIsPassedOver) {
  ScratchDir scratch;
  fs::path root = MultilibTree(scratch);
  // /usr/lib/x86_64-linux-gnu is searched before /usr/lib64.
  fs::create_directories(root / kLibDir.substr(1));
  std::ofstream(root / "usr/lib/x86_64-linux-gnu" / (std::string("libcuda.so.") + kDriver))
      << ElfFile(2, 183, "aarch64");
  std::ofstream(root / "usr/lib/x86_64-linux-gnu" / (std::string("libnvidia-ml.so.") + kDriver))
      << "not a library";
  DriverFiles files = DiscoverDriverFiles(RootedFs(root.string()), kDriver);
  EXPECT_THAT(files.problems, IsEmpty());
  ASSERT_GE(files.libraries.size(), 2u);
  EXPECT_EQ(files.libraries[0].path, std::string("/usr/lib64/libnvidia-ml.so.") + kDriver);
  EXPECT_EQ(files.libraries[1].path, std::string("/usr/lib64/libcuda.so.") + kDriver);
}

TEST(DriverFiles, OnlyThirtyTwoBitCopiesOfARequiredLibraryIsAProblemNamingThem) {
  ScratchDir scratch;
  fs::path root = MultilibTree(scratch);
  fs::remove(root / "usr/lib64" / (std::string("libcuda.so.") + kDriver));
  DriverFiles files = DiscoverDriverFiles(RootedFs(root.string()), kDriver);
  EXPECT_THAT(files.problems,
              ElementsAre(std::string("no 64-bit x86-64 libcuda.so.") + kDriver +
                          ", only /usr/lib/libcuda.so." + kDriver + " (32-bit i386)"));
}

TEST(DriverFiles, NoHookAtAllIsAProblem) {
  ScratchDir scratch;
  fs::path root = CopyOfH100(scratch);
  fs::remove(root / "usr/local/bin/wsched-cdi-hook");
  DriverFiles files = DiscoverDriverFiles(RootedFs(root.string()), kDriver);
  EXPECT_TRUE(files.hook.path.empty());
  EXPECT_THAT(files.problems, ElementsAre(HasSubstr("no CDI hook: neither NVIDIA's nvidia-cdi-hook "
                                                    "or nvidia-ctk nor wsched-cdi-hook")));
}

TEST(ElfIdentity, ReadsClassAndMachineInTheFilesByteOrder) {
  EXPECT_EQ(ReadElfIdentity(ElfFile(2, 62, "")), (ElfIdentity{2, 62}));
  EXPECT_EQ(ReadElfIdentity(ElfFile(1, 3, "")), (ElfIdentity{1, 3}));
  std::string big = ElfFile(2, 0, "");
  big[5] = 2;
  big[18] = 0;
  big[19] = 21;  // ppc64, big-endian.
  EXPECT_EQ(ReadElfIdentity(big), (ElfIdentity{2, 21}));
  EXPECT_EQ(ReadElfIdentity("fake libcuda.so 550.54.15 padded to twenty"), std::nullopt);
  EXPECT_EQ(ReadElfIdentity("\x7f" "ELF"), std::nullopt) << "too short";
  EXPECT_EQ(DescribeElf({1, 3}), "32-bit i386");
  EXPECT_EQ(DescribeElf(NodeElfIdentity()).substr(0, 6), "64-bit");
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
  // The soname link and the linker cache come from wsched's hook.
  EXPECT_THAT(mounts, ::testing::Not(Contains(std::string(kLibDir) + "/libcuda.so.1")));
  EXPECT_THAT(mounts, Contains("/usr/bin/nvidia-smi"));
  EXPECT_THAT(mounts, Contains("/lib/firmware/nvidia/550.54.15"));
  EXPECT_THAT(mounts, Contains("/run/nvidia-persistenced/socket"));
  ASSERT_EQ(spec["containerEdits"]["hooks"].size(), 2u);
  const Json& links = spec["containerEdits"]["hooks"][0];
  EXPECT_EQ(links["path"], root + "/usr/local/bin/wsched-cdi-hook");
  EXPECT_THAT(links["args"].get<std::vector<std::string>>(),
              Contains("libcuda.so.550.54.15::/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  EXPECT_THAT(spec["containerEdits"]["hooks"][1]["args"].get<std::vector<std::string>>(),
              ElementsAre("wsched-cdi-hook", "update-ldcache", "--folder", kLibDir));
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
