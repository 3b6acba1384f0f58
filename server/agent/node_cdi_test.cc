#include "server/agent/node_cdi.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/agent/discovery.h"
#include "server/agent/driver_files.h"
#include "server/agent/elf_identity.h"
#include "server/agent/nvidia_layout.h"
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
using ::testing::UnorderedElementsAre;
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

// ---- MIG slices (h200-mig: GPU 0 in MIG mode as 3g + 2g + 1g + 1g, all
// usable; GPU 1 pending, GPU 2 off; GPU 3 with a 3g split in two compute
// instances, a 2g without one and a usable 1g).

constexpr char kGpu0[] = "GPU-2c6f1a3e-91d4-4b7a-a0e2-5f83c1d9b417";
constexpr char kGpu3[] = "GPU-e8f35d92-4c1b-47a0-b6d4-93a0c5e1f708";
constexpr char kSlice3g[] = "MIG-5b1e0c7a-93d2-5f4e-8a61-c2d7e9f04b13";     // GPU 0 GI 2.
constexpr char kSlice2g[] = "MIG-a07c3e58-1d94-5b2f-9e6a-74f0b8c2d915";     // GPU 0 GI 4.
constexpr char kSlice1gGi7[] = "MIG-c4e8a209-5f1b-5d73-a6c0-9b2e17d4f386";  // GPU 0 GI 7.
constexpr char kSlice1gGi8[] = "MIG-3f92d1b6-7ae0-5c48-b1d3-08e6a5f7c240";  // GPU 0 GI 8.
constexpr char kSliceGpu3[] = "MIG-e2a5c7f0-48d1-5b96-a3e7-5c0f9d218b47";   // GPU 3 GI 13.

// The H200 tree with the H100 tree's driver files (the same 550.54.15), so
// that wsched's spec can be written for it.
fs::path MigTreeWithDriver(const ScratchDir& scratch) {
  fs::path root = scratch.path() / "root";
  const auto recursive = fs::copy_options::recursive | fs::copy_options::copy_symlinks;
  fs::copy(Tree("h200-mig"), root, recursive);
  for (const char* dir : {"usr", "lib", "run", "etc/ld.so.conf.d"}) {
    fs::create_directories(root / dir);
    fs::copy(fs::path(Tree("h100-8gpu")) / dir, root / dir, recursive);
  }
  return root;
}

// Discovery as the agent runs it, with the fake nvidia-smi's MIG tables.
core::NodeInfo DiscoverMig(const fs::path& root) {
  setenv("FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/h200-mig").c_str(), 1);
  NvidiaLayout layout = NvidiaLayoutReader(testing::FakeNvidiaSmi()).Read();
  unsetenv("FAKE_NVIDIA_SMI_DIR");
  EXPECT_THAT(layout.problems, IsEmpty());
  DiscoveryOptions options;
  options.root = root.string();
  options.nvidia_layout = std::move(layout);
  absl::StatusOr<core::NodeInfo> node = DiscoverNode(options);
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? *node : core::NodeInfo{};
}

const Json* SpecDevice(const Json& spec, const std::string& name) {
  for (const Json& device : spec["devices"]) {
    if (device["name"] == name) return &device;
  }
  return nullptr;
}

std::vector<std::string> NodePaths(const Json& device) {
  std::vector<std::string> paths;
  for (const Json& node : device["containerEdits"]["deviceNodes"]) paths.push_back(node["path"]);
  return paths;
}

// Every slice of a GPU in MIG mode has exactly one of a name and a
// problem, and nothing else has either.
void ExpectEachSliceNamedOrExplained(const core::NodeInfo& node, const NodeCdiPlan& plan) {
  std::set<std::string> keys;
  for (const core::Gpu& gpu : node.gpus) {
    if (!gpu.mig || !gpu.mig->enabled) continue;
    for (const core::MigInstance& slice : gpu.mig->instances) {
      const std::string key = SliceKey(gpu, slice);
      keys.insert(key);
      EXPECT_NE(plan.slice_names.contains(key), plan.slice_problems.contains(key)) << key;
    }
  }
  EXPECT_EQ(plan.slice_names.size() + plan.slice_problems.size(), keys.size());
}

TEST(NodeCdiMig, EachUsableSliceIsADeviceWithItsGpuItsOwnTwoCapabilityNodesAndItsUuid) {
  ScratchDir scratch;
  fs::path root = MigTreeWithDriver(scratch);
  core::NodeInfo node = DiscoverMig(root);
  ASSERT_EQ(node.gpus.size(), 4u);
  NodeCdiPlan plan =
      PlanNodeCdi(RootedFs(root.string()), node, Options(scratch.path() / "cdi", root.string()));
  EXPECT_EQ(plan.cdi.mode, core::CdiMode::kWsched);
  EXPECT_THAT(plan.cdi.problems, IsEmpty()) << "unusable slices are no fault of the spec";
  EXPECT_THAT(plan.gpu_problems, IsEmpty());
  ExpectEachSliceNamedOrExplained(node, plan);

  Json spec = GpuSpec(plan);
  ASSERT_EQ(spec["devices"].size(), 4u + 5u) << "four whole GPUs, GPU 0's 4 slices, GPU 3's 1";
  // The caps minors are the driver's (mig-minors): 3 + 135 per GPU + 9 per
  // GPU instance, the compute instance's one after.
  struct Want {
    const char* uuid;
    int gpu;
    int gi_minor;
  };
  for (const Want& want : {Want{kSlice3g, 0, 21}, Want{kSlice2g, 0, 39}, Want{kSlice1gGi7, 0, 66},
                           Want{kSlice1gGi8, 0, 75}, Want{kSliceGpu3, 3, 525}}) {
    SCOPED_TRACE(want.uuid);
    const Json* device = SpecDevice(spec, want.uuid);
    ASSERT_NE(device, nullptr);
    const std::string gi = absl::StrCat("/dev/nvidia-caps/nvidia-cap", want.gi_minor);
    const std::string ci = absl::StrCat("/dev/nvidia-caps/nvidia-cap", want.gi_minor + 1);
    EXPECT_THAT(NodePaths(*device), ElementsAre(absl::StrCat("/dev/nvidia", want.gpu), gi, ci));
    const Json& nodes = (*device)["containerEdits"]["deviceNodes"];
    EXPECT_EQ(nodes[0]["major"], 195);
    EXPECT_EQ(nodes[0]["minor"], want.gpu);
    EXPECT_EQ(nodes[1]["major"], 509) << "nvidia-caps in the tree's /proc/devices";
    EXPECT_EQ(nodes[1]["minor"], want.gi_minor);
    EXPECT_EQ(nodes[2]["minor"], want.gi_minor + 1);
    EXPECT_EQ(nodes[2]["hostPath"], root.string() + ci);
    EXPECT_EQ(nodes[2]["permissions"], "rw");
    EXPECT_THAT((*device)["containerEdits"]["env"].get<std::vector<std::string>>(),
                ElementsAre(std::string("NVIDIA_VISIBLE_DEVICES=") + want.uuid));
    EXPECT_EQ(plan.slice_names.at(want.uuid), std::string("wsched.io/gpu=") + want.uuid);
  }
  // The whole GPU in MIG mode keeps its device (the server does not hand it
  // out whole), and the shared edits are the GPUs' own.
  ASSERT_NE(SpecDevice(spec, kGpu0), nullptr);
  EXPECT_THAT(NodePaths(*SpecDevice(spec, kGpu0)), ElementsAre("/dev/nvidia0"));
  std::vector<std::string> controls;
  for (const Json& device : spec["containerEdits"]["deviceNodes"]) {
    controls.push_back(device["path"]);
  }
  EXPECT_THAT(controls, Contains("/dev/nvidiactl"));
  EXPECT_THAT(ContainerPaths(spec), Contains(std::string(kLibDir) + "/libcuda.so.550.54.15"));
  EXPECT_FALSE(spec["containerEdits"].contains("env"));

  ApplyNodeCdi(plan, node);
  const std::vector<core::MigInstance>& gpu0 = node.gpus[0].mig->instances;
  ASSERT_EQ(gpu0.size(), 4u);
  for (const core::MigInstance& slice : gpu0) {
    EXPECT_EQ(slice.cdi_device, "wsched.io/gpu=" + slice.uuid);
  }
  const std::vector<core::MigInstance>& gpu3 = node.gpus[3].mig->instances;
  ASSERT_EQ(gpu3.size(), 3u);
  EXPECT_EQ(gpu3[0].cdi_device, "");
  EXPECT_EQ(gpu3[1].cdi_device, "");
  EXPECT_EQ(gpu3[2].cdi_device, std::string("wsched.io/gpu=") + kSliceGpu3);
}

TEST(NodeCdiMig, AnUnusableSliceGetsNoDeviceAndAReasonKeyedByItsGpuInstance) {
  ScratchDir scratch;
  fs::path root = MigTreeWithDriver(scratch);
  fs::remove(root / "proc/driver/nvidia/capabilities/gpu0/mig/gi7/ci0/access");
  core::NodeInfo node = DiscoverMig(root);
  NodeCdiPlan plan =
      PlanNodeCdi(RootedFs(root.string()), node, Options(scratch.path() / "cdi", "/"));
  ExpectEachSliceNamedOrExplained(node, plan);
  // GPU 3's GI 1 has two compute instances, GI 5 none: no UUID, so keyed by
  // the GPU's UUID and the GPU instance.
  EXPECT_THAT(plan.slice_problems.at(std::string(kGpu3) + "/gi1"),
              HasSubstr("(GPU 3 GPU instance 1): no one compute instance spans the GPU instance"));
  EXPECT_TRUE(plan.slice_problems.contains(std::string(kGpu3) + "/gi5"));
  EXPECT_THAT(plan.slice_problems.at(kSlice1gGi7),
              HasSubstr("no capability device node (/proc/driver/nvidia/capabilities/gpu0/mig/gi7/"
                        "ci0/access missing"));
  EXPECT_FALSE(plan.slice_names.contains(kSlice1gGi7));
  EXPECT_THAT(plan.cdi.problems, IsEmpty()) << "the report already says the slice is unusable";
  Json spec = GpuSpec(plan);
  EXPECT_EQ(SpecDevice(spec, kSlice1gGi7), nullptr);
  for (const Json& device : spec["devices"]) {
    EXPECT_THAT(NodePaths(device), ::testing::Not(Contains("/dev/nvidia-caps/nvidia-cap66")))
        << "the GPU instance's node goes to no other device either";
  }
  ApplyNodeCdi(plan, node);
  EXPECT_EQ(node.gpus[0].mig->instances[2].cdi_device, "");
  EXPECT_EQ(node.gpus[0].mig->instances[3].cdi_device, std::string("wsched.io/gpu=") + kSlice1gGi8);
}

TEST(NodeCdiMig, AUsableSliceWithoutAUuidThatCanNameItIsANodeProblem) {
  ScratchDir scratch;
  fs::path root = MigTreeWithDriver(scratch);
  core::NodeInfo node = DiscoverMig(root);
  ASSERT_EQ(node.gpus[0].mig->instances.size(), 4u);
  std::vector<core::MigInstance>& slices = node.gpus[0].mig->instances;
  slices[0].uuid = "";                                    // -L or -q failed.
  slices[1].uuid = std::string("MIG-") + kGpu0 + "/4/0";  // The format before R470.
  slices[3].uuid = kSliceGpu3;                            // Reported twice.
  NodeCdiPlan plan =
      PlanNodeCdi(RootedFs(root.string()), node, Options(scratch.path() / "cdi", "/"));
  ExpectEachSliceNamedOrExplained(node, plan);
  EXPECT_THAT(plan.slice_problems.at(std::string(kGpu0) + "/gi2"), HasSubstr("no MIG UUID"));
  EXPECT_THAT(plan.slice_problems.at(slices[1].uuid), HasSubstr("is not a CDI device name"));
  EXPECT_THAT(plan.slice_problems.at(kSliceGpu3), HasSubstr("reports the same MIG UUID"));
  EXPECT_EQ(plan.slice_names.size(), 1u);
  EXPECT_TRUE(plan.slice_names.contains(kSlice1gGi7));
  EXPECT_EQ(plan.cdi.problems.size(), 4u) << "a usable slice without a device is a node problem";
  EXPECT_THAT(plan.cdi.problems[0], HasSubstr("MIG slice " + std::string(kGpu0) + "/gi2 (GPU 0"));
  EXPECT_TRUE(plan.gpu_problems.empty()) << "the GPUs themselves are fine";
  Json spec = GpuSpec(plan);
  EXPECT_EQ(spec["devices"].size(), 4u + 1u);
}

TEST(NodeCdiMig, NoSpecMeansNoSliceNamesAndEverySliceKnowsWhy) {
  ScratchDir scratch;
  fs::path root = MigTreeWithDriver(scratch);
  fs::remove(root / "usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15");
  core::NodeInfo node = DiscoverMig(root);
  NodeCdiPlan plan =
      PlanNodeCdi(RootedFs(root.string()), node, Options(scratch.path() / "cdi", "/"));
  EXPECT_TRUE(plan.slice_names.empty());
  ExpectEachSliceNamedOrExplained(node, plan);
  EXPECT_THAT(plan.slice_problems.at(kSlice2g), HasSubstr("CDI: libcuda.so.550.54.15 not found"));
}

// NVIDIA's spec for the MIG node as `nvidia-ctk cdi generate` writes it:
// whole GPUs by index, slices by "<GPU>:<MIG device index>" with their GPU's
// node and their two capability nodes; here GPU 0's 3g by its MIG UUID
// instead, its 1g at GI 8 missing (made after the spec), a device that
// holds two slices' nodes, and "all".
void WriteNvidiaMigSpec(const core::NodeInfo& node, const fs::path& file) {
  auto caps = [](const core::MigInstance& slice) {
    return "    - path: " + slice.gi_access->path + "\n    - path: " + slice.ci_access->path + "\n";
  };
  const std::vector<core::MigInstance>& gpu0 = node.gpus[0].mig->instances;
  const core::MigInstance& gpu3_1g = node.gpus[3].mig->instances[2];
  fs::create_directories(file.parent_path());
  std::ofstream spec(file);
  spec << "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n";
  for (int i = 0; i < 4; ++i) {
    spec << "- name: \"" << i << "\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia"
         << i << "\n";
  }
  spec << "- name: " << kSlice3g
       << "\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
       << caps(gpu0[0]);
  spec << "- name: \"0:1\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
       << caps(gpu0[1]);
  // Order of nodes is NVIDIA's to choose; the GPU's DRM node comes along.
  spec << "- name: \"0:3\"\n  containerEdits:\n    deviceNodes:\n"
       << caps(gpu0[2]) << "    - path: /dev/dri/card1\n    - path: /dev/nvidia0\n";
  spec << "- name: two\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
       << caps(gpu0[3]) << caps(gpu0[1]);
  spec << "- name: \"3:2\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia3\n"
       << caps(gpu3_1g);
  spec << "- name: all\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
       << caps(gpu0[3]);
}

TEST(NodeCdiMig, NvidiaModeAnswersWithNvidiasSliceNamesAndFlagsTheSlicesItLacks) {
  ScratchDir scratch;
  fs::path root = MigTreeWithDriver(scratch);
  core::NodeInfo node = DiscoverMig(root);
  ASSERT_EQ(node.gpus.size(), 4u);
  CdiOptions options = Options(scratch.path() / "cdi", "/");
  WriteNvidiaMigSpec(node, fs::path(options.nvidia_spec_dirs[0]) / "nvidia.yaml");

  NodeCdiPlan plan = PlanNodeCdi(RootedFs(root.string()), node, options);
  EXPECT_EQ(plan.cdi.mode, core::CdiMode::kNvidia);
  ExpectEachSliceNamedOrExplained(node, plan);
  EXPECT_EQ(plan.slice_names.at(kSlice3g), std::string("nvidia.com/gpu=") + kSlice3g);
  EXPECT_EQ(plan.slice_names.at(kSlice2g), "nvidia.com/gpu=0:1");
  EXPECT_EQ(plan.slice_names.at(kSlice1gGi7), "nvidia.com/gpu=0:3");
  EXPECT_EQ(plan.slice_names.at(kSliceGpu3), "nvidia.com/gpu=3:2");
  EXPECT_FALSE(plan.slice_names.contains(kSlice1gGi8)) << "neither \"two\" nor \"all\" is its own";
  EXPECT_THAT(plan.slice_problems.at(kSlice1gGi8),
              HasSubstr("(GPU 0 GPU instance 8): not in NVIDIA's CDI spec"));
  EXPECT_THAT(plan.cdi.problems, ElementsAre(HasSubstr(std::string("MIG slice ") + kSlice1gGi8)));
  EXPECT_EQ(plan.gpu_names.at(kGpu0), "nvidia.com/gpu=0");
  EXPECT_EQ(Find(plan, kGpuSpecFile), nullptr);

  ApplyNodeCdi(plan, node);
  std::vector<std::string> names;
  for (const core::MigInstance& slice : node.gpus[0].mig->instances)
    names.push_back(slice.cdi_device);
  EXPECT_THAT(names, UnorderedElementsAre(std::string("nvidia.com/gpu=") + kSlice3g,
                                          "nvidia.com/gpu=0:1", "nvidia.com/gpu=0:3", ""));
}

TEST(NodeCdiMig, WithholdAllTakesEveryGpuAndSliceName) {
  ScratchDir scratch;
  fs::path root = MigTreeWithDriver(scratch);
  core::NodeInfo node = DiscoverMig(root);
  NodeCdiPlan plan =
      PlanNodeCdi(RootedFs(root.string()), node, Options(scratch.path() / "cdi", "/"));
  ASSERT_FALSE(plan.slice_names.empty());
  WithholdAll(node, "CDI spec not written: disk full", plan);
  EXPECT_TRUE(plan.gpu_names.empty());
  EXPECT_TRUE(plan.slice_names.empty());
  ExpectEachSliceNamedOrExplained(node, plan);
  EXPECT_EQ(plan.slice_problems.at(kSlice3g), "CDI spec not written: disk full");
  ApplyNodeCdi(plan, node);
  for (const core::MigInstance& slice : node.gpus[0].mig->instances)
    EXPECT_EQ(slice.cdi_device, "");
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
