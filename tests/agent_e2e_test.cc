// The real wsched-agent against the real wsched-server and PostgreSQL: the
// fake sysfs trees under tests/sysfs register as nodes an operator can list.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Tree(const std::string& name) {
  return testing::SourcePath(absl::StrCat("tests/sysfs/", name));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A wsched-agent child process; stdout and stderr go to a log file.
class AgentProcess {
 public:
  explicit AgentProcess(std::vector<std::string> flags) {
    char pattern[] = "/tmp/wsched-agent-e2e-XXXXXX";
    const char* dir = mkdtemp(pattern);
    log_path_ = absl::StrCat(dir == nullptr ? "/tmp" : dir, "/agent.log");
    flags.insert(flags.begin(), WSCHED_AGENT_BINARY);
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      std::vector<char*> argv;
      for (auto& flag : flags) argv.push_back(flag.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~AgentProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // Waits for the exit; returns its code, or -1 after killing it at the deadline.
  int Wait(int timeout_seconds = 30) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    return -1;
  }

  void Signal(int signal) const {
    if (pid_ > 0) kill(pid_, signal);
  }

  std::string Log() const { return ReadFile(log_path_); }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

bool Eventually(const std::function<bool()>& done, int seconds = 10) {
  return testing::Eventually(done, seconds);
}

class AgentE2eTest : public ::testing::Test {
 protected:
  void StartServer(const std::string& catalog, std::vector<std::string> flags = {},
                   bool metrics = false) {
    testing::ServerConfig config{db_.url(), catalog, std::move(flags)};
    config.metrics = metrics;
    server_ = std::make_unique<testing::ServerProcess>(std::move(config));
    ASSERT_TRUE(server_->started());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
  }

  std::vector<std::string> AgentFlags(const std::string& tree, const std::string& pool,
                                      const std::string& node_name,
                                      const std::string& nvidia_smi = "") {
    return {"--root=" + Tree(tree),
            "--server=" + server_->address(),
            std::string("--token=") + testing::kAgentToken,
            "--pool=" + pool,
            "--node_name=" + node_name,
            "--nvidia_smi=" + nvidia_smi,
            "--cdi_dir="};  // No node spec: these tests read the inline answers.
  }

  std::optional<v1::Node> FindNode(const std::string& name) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ListNodesResponse response;
    grpc::Status status = inventory_->ListNodes(&context, v1::ListNodesRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const auto& node : response.nodes()) {
      if (node.info().name() == name) return node;
    }
    return std::nullopt;
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
};

TEST_F(AgentE2eTest, H100TreeRegistersAsAReadyEightGpuNode) {
  StartServer(testing::SourcePath("classes/saas.yaml"));
  std::vector<std::string> flags = AgentFlags("h100-8gpu", "gpu-h100", "h100-e2e");
  flags.push_back("--once");
  AgentProcess agent(flags);
  ASSERT_EQ(agent.Wait(), 0) << agent.Log() << server_->Log();

  std::optional<v1::Node> node = FindNode("h100-e2e");
  ASSERT_TRUE(node.has_value()) << agent.Log();
  EXPECT_EQ(node->info().pool(), "gpu-h100");
  EXPECT_EQ(node->state(), v1::NODE_STATE_READY);
  EXPECT_EQ(node->info().kernel_version(), "5.15.0-91-generic");
  EXPECT_EQ(node->info().os_id(), "ubuntu");
  EXPECT_EQ(node->info().os_version(), "22.04");
  EXPECT_EQ(node->info().driver_version(), "550.54.15");
  EXPECT_EQ(node->driver_state(), v1::DRIVER_STATE_READY) << node->driver_detail();
  ASSERT_EQ(node->info().gpus_size(), 8);
  std::set<std::string> uuids, addresses;
  std::set<int> indices;
  for (const auto& gpu : node->info().gpus()) {
    EXPECT_THAT(gpu.uuid(), ::testing::StartsWith("GPU-"));
    EXPECT_THAT(gpu.model(), HasSubstr("H100"));
    EXPECT_GE(gpu.iommu_group(), 0);
    EXPECT_TRUE(gpu.passthrough_safe()) << gpu.pci_address() << ": " << gpu.passthrough_unsafe_reason();
    uuids.insert(gpu.uuid());
    addresses.insert(gpu.pci_address());
    indices.insert(gpu.index());
  }
  EXPECT_EQ(uuids.size(), 8u);
  EXPECT_EQ(addresses.size(), 8u);
  EXPECT_EQ(indices.size(), 8u);
  EXPECT_THAT(addresses, ::testing::Contains("0000:18:00.0"));
  EXPECT_EQ(node->info().control_devices_size(), 4);

  // A second run of the same agent re-registers the same node, no duplicate.
  AgentProcess again(flags);
  ASSERT_EQ(again.Wait(), 0) << again.Log();
  EXPECT_EQ(db_.Query("SELECT count(*) FROM nodes"), "1");

  // GPU work can be placed on it.
  auto placement = v1::PlacementService::NewStub(server_->channel());
  grpc::ClientContext context;
  testing::Authorize(context, testing::kControlPlaneToken);
  v1::PlaceWorkspaceRequest request;
  request.set_workspace_id("ws-e2e");
  request.set_org_id("o-1");
  request.set_project_id("p-42");
  request.set_user_id("u-1");
  request.set_class_id("gpu-2x");
  v1::Workspace workspace;
  grpc::Status status = placement->PlaceWorkspace(&context, request, &workspace);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(workspace.node_name(), "h100-e2e");
  EXPECT_EQ(workspace.gpus_size(), 2);
}

// The H200 tree with nvidia-smi's MIG tables and topology: the server takes
// every slice the agent reports (an unusable one too), stores them with the
// links, and keeps the GPUs in MIG mode from whole-GPU classes.
TEST_F(AgentE2eTest, H200MigTreeReportsSlicesAndLinksThroughTheServer) {
  StartServer(testing::SourcePath("classes/saas.yaml"));
  setenv("FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/h200-mig").c_str(), 1);
  std::vector<std::string> flags =
      AgentFlags("h200-mig", "gpu-h100", "h200-e2e", Tree("bin/nvidia-smi"));
  flags.push_back("--once");
  AgentProcess agent(flags);
  const int exit_code = agent.Wait();
  unsetenv("FAKE_NVIDIA_SMI_DIR");
  ASSERT_EQ(exit_code, 0) << agent.Log() << server_->Log();

  std::optional<v1::Node> node = FindNode("h200-e2e");
  ASSERT_TRUE(node.has_value()) << agent.Log();
  ASSERT_EQ(node->info().gpus_size(), 4);
  const v1::Gpu& sliced = node->info().gpus(0);
  ASSERT_TRUE(sliced.has_mig());
  EXPECT_TRUE(sliced.mig().enabled());
  EXPECT_EQ(sliced.mig().instances_size(), 4);
  EXPECT_GE(sliced.mig().profiles_size(), 6);
  for (const auto& slice : sliced.mig().instances()) {
    EXPECT_THAT(slice.uuid(), ::testing::StartsWith("MIG-")) << slice.profile();
    EXPECT_THAT(slice.gi_access().path(), ::testing::StartsWith("/dev/nvidia-caps/nvidia-cap"));
  }
  EXPECT_THAT(sliced.binding_problem(), HasSubstr("is in MIG mode"));
  EXPECT_FALSE(node->info().gpus(2).mig().enabled());
  EXPECT_EQ(node->info().gpus(2).binding_problem(), "");
  // GPU 3's 3g is split in two compute instances: reported, not usable.
  bool unusable = false;
  for (const auto& slice : node->info().gpus(3).mig().instances()) {
    unusable |= slice.compute_instance() == -1;
  }
  EXPECT_TRUE(unusable);
  ASSERT_EQ(sliced.links_size(), 3);
  for (const auto& link : sliced.links()) {
    EXPECT_EQ(link.kind(), v1::GPU_LINK_KIND_NVLINK);
    EXPECT_EQ(link.nvlinks(), 18);
  }
}

TEST_F(AgentE2eTest, DesktopTreeRegistersWithItsGpuUnsafeForPassthrough) {
  StartServer(testing::SourcePath("tests/fixtures/desktop-catalog.yaml"));
  std::vector<std::string> flags =
      AgentFlags("desktop-usb-group", "desktop", "desk-e2e", Tree("bin/nvidia-smi"));
  flags.push_back("--once");
  AgentProcess agent(flags);
  ASSERT_EQ(agent.Wait(), 0) << agent.Log() << server_->Log();

  std::optional<v1::Node> node = FindNode("desk-e2e");
  ASSERT_TRUE(node.has_value()) << agent.Log();
  EXPECT_EQ(node->info().pool(), "desktop");
  EXPECT_EQ(node->state(), v1::NODE_STATE_READY);
  EXPECT_EQ(node->info().os_id(), "fedora");
  EXPECT_EQ(node->info().os_version(), "39");
  EXPECT_EQ(node->driver_state(), v1::DRIVER_STATE_READY) << node->driver_detail();
  ASSERT_EQ(node->info().gpus_size(), 1);
  const v1::Gpu& gpu = node->info().gpus(0);
  EXPECT_EQ(gpu.pci_address(), "0000:01:00.0");
  EXPECT_EQ(gpu.uuid(), "GPU-3f9c2a71-8d4e-4b0a-9c51-2e7d6a1b8f04");
  EXPECT_FALSE(gpu.passthrough_safe());
  EXPECT_THAT(gpu.passthrough_unsafe_reason(), HasSubstr("0000:00:14.0"));
  bool usb_member = false;
  for (const auto& member : gpu.iommu_group_members()) {
    if (member.pci_address() == "0000:00:14.0") usb_member = true;
  }
  EXPECT_TRUE(usb_member) << gpu.DebugString();

  // The IOMMU rule in placement: a VM class does not get the unsafe GPU, a
  // container class does.
  auto placement = v1::PlacementService::NewStub(server_->channel());
  auto place = [&](const std::string& id, const std::string& class_id, v1::Workspace* out) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id("o-1");
    request.set_project_id("p-42");
    request.set_user_id("u-1");
    request.set_class_id(class_id);
    return placement->PlaceWorkspace(&context, request, out);
  };
  v1::Workspace workspace;
  grpc::Status status = place("ws-vm", "desktop-gpu-vm", &workspace);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_THAT(workspace.node_name(), IsEmpty());
  status = place("ws-container", "desktop-gpu", &workspace);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(workspace.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(workspace.node_name(), "desk-e2e");
}

TEST_F(AgentE2eTest, RunningAgentKeepsItsNodeAliveWithHeartbeats) {
  // The server asks for a 1 s heartbeat; without it the node would be lost
  // after 3 s (the agent's own default interval is 10 s).
  StartServer(testing::SourcePath("classes/saas.yaml"),
              {"--heartbeat_interval=1s", "--node_lost_after=3s"});
  AgentProcess agent(AgentFlags("h100-8gpu", "gpu-h100", "h100-live"));
  ASSERT_TRUE(Eventually([&] { return FindNode("h100-live").has_value(); }))
      << agent.Log() << server_->Log();
  // Alive past --node_lost_after (3 s): wait for a heartbeat recorded more
  // than that after the first one, then it must still be ready.
  const int64_t first = FindNode("h100-live")->last_heartbeat().seconds();
  ASSERT_TRUE(Eventually([&] {
    std::optional<v1::Node> n = FindNode("h100-live");
    return n && n->last_heartbeat().seconds() >= first + 4;
  })) << agent.Log();
  std::optional<v1::Node> node = FindNode("h100-live");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->state(), v1::NODE_STATE_READY) << agent.Log();

  // SIGTERM: the agent finishes cleanly.
  agent.Signal(SIGTERM);
  EXPECT_EQ(agent.Wait(), 0) << agent.Log();
  // Without heartbeats the node is lost soon after.
  EXPECT_TRUE(Eventually([&] {
    std::optional<v1::Node> n = FindNode("h100-live");
    return n && n->state() == v1::NODE_STATE_LOST;
  }));
}


// A copy of tests/sysfs/vfio-host the agent may write into.
std::string CopyOfTree(const std::string& name) {
  char pattern[] = "/tmp/wsched-vfio-e2e-XXXXXX";
  const char* dir = mkdtemp(pattern);
  std::string root = absl::StrCat(dir == nullptr ? "/tmp" : dir, "/root");
  std::filesystem::copy(Tree(name), root,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
  return root;
}

// What the kernel does when it binds a device to vfio-pci: the driver link
// and the group's device node. (The agent's own writes land in plain files
// of the fake tree; nothing there plays the kernel.)
void KernelBindsToVfio(const std::string& root, const std::string& address, int group) {
  std::filesystem::path driver = absl::StrCat(root, "/sys/bus/pci/devices/", address, "/driver");
  std::filesystem::remove(driver);
  std::filesystem::create_symlink("/sys/bus/pci/drivers/vfio-pci", driver);
  std::ofstream(absl::StrCat(root, "/dev/vfio/", group)) << "";
}

// VFIO binding, end to end: the agent of a gpu_binding vfio pool binds and
// reports each group member's driver; a VM is answered only for a group
// wholly on vfio-pci, and a member on another driver keeps its GPU out with
// a reason that names it; in a container pool a GPU on vfio-pci is not
// handed out.
TEST_F(AgentE2eTest, VfioPoolHandsVmsOnlyGroupsBoundToVfioPci) {
  StartServer(testing::SourcePath("tests/fixtures/vfio-catalog.yaml"), {}, /*metrics=*/true);
  auto not_bound = [&](const std::string& pool) {
    return testing::MetricValue(testing::HttpGet(server_->metrics_port(), "/metrics"),
                                "wsched_gpus_not_bound", {absl::StrCat("pool=\"", pool, "\"")});
  };
  auto placement = v1::PlacementService::NewStub(server_->channel());
  auto place = [&](const std::string& id, const std::string& class_id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_org_id("o-1");
    request.set_project_id("p-42");
    request.set_user_id("u-1");
    request.set_class_id(class_id);
    v1::Workspace workspace;
    grpc::Status status = placement->PlaceWorkspace(&context, request, &workspace);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return workspace;
  };
  auto get = [&](const std::string& id) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::GetWorkspaceRequest request;
    request.set_workspace_id(id);
    v1::Workspace workspace;
    EXPECT_TRUE(placement->GetWorkspace(&context, request, &workspace).ok());
    return workspace;
  };

  // The GPU of group 33 is on vfio-pci already, its audio function is not;
  // the agent's writes reach the tree's files, but no kernel acts on them.
  const std::string root = CopyOfTree("vfio-host");
  KernelBindsToVfio(root, "0000:3b:00.0", 33);
  std::filesystem::remove(root + "/dev/vfio/33");
  std::vector<std::string> flags = AgentFlags("vfio-host", "gpu-vm", "vm-e2e");
  flags[0] = "--root=" + root;
  flags.push_back("--gpu_binding=vfio");
  flags.push_back("--once");
  {
    AgentProcess agent(flags);
    ASSERT_EQ(agent.Wait(), 0) << agent.Log() << server_->Log();
    EXPECT_THAT(agent.Log(), HasSubstr("VFIO: IOMMU group 33"));
  }
  // The audio function got the kernel's three writes; the bridge, the NIC
  // outside the group and the GPU already bound got none.
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:3b:00.1/driver_override"), "vfio-pci");
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/drivers/snd_hda_intel/unbind"), "0000:3b:00.1");
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/drivers_probe"), "0000:3b:00.1");
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:3b:00.0/driver_override"), "(null)\n");
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:3a:00.0/driver_override"), "(null)\n");
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:5e:00.0/driver_override"), "(null)\n");
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/drivers/mlx5_core/unbind"), "");

  std::optional<v1::Node> node = FindNode("vm-e2e");
  ASSERT_TRUE(node.has_value());
  // A VM host needs no NVIDIA driver for its passed-through GPUs.
  EXPECT_EQ(node->driver_state(), v1::DRIVER_STATE_NOT_NEEDED) << node->driver_detail();
  const std::string reason =
      "GPU 0000:3b:00.0: group 33 member 0000:3b:00.1 is bound to snd_hda_intel, not vfio-pci";
  for (const auto& gpu : node->info().gpus()) {
    EXPECT_EQ(gpu.driver(), "vfio-pci") << gpu.pci_address();
    EXPECT_EQ(gpu.binding_problem(), gpu.pci_address() == "0000:3b:00.0" ? reason : "");
  }

  // Group 70 is wholly bound: the first VM gets it; the second waits with the reason.
  v1::Workspace first = place("ws-vm-1", "h100-vm");
  ASSERT_EQ(first.state(), v1::WORKSPACE_STATE_PLACED) << first.pending_reason();
  ASSERT_EQ(first.gpus_size(), 1);
  EXPECT_EQ(first.gpus(0).pci_address(), "0000:86:00.0");
  EXPECT_THAT(first.device_spec().vfio().device_paths(),
              ::testing::ElementsAre("/dev/vfio/vfio", "/dev/vfio/70"));
  v1::Workspace second = place("ws-vm-2", "h100-vm");
  ASSERT_EQ(second.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(second.pending().code(), v1::PENDING_REASON_CODE_GPUS_NOT_BOUND);
  EXPECT_EQ(second.pending().node(), "vm-e2e");
  EXPECT_THAT(second.pending_reason(), HasSubstr(reason));
  EXPECT_EQ(not_bound("gpu-vm"), 1);

  // The kernel binds the audio function; the agent's next report lets the
  // waiting VM in, with the whole group but not its bridge.
  KernelBindsToVfio(root, "0000:3b:00.1", 33);
  {
    AgentProcess agent(flags);
    ASSERT_EQ(agent.Wait(), 0) << agent.Log();
  }
  ASSERT_TRUE(Eventually([&] { return get("ws-vm-2").state() == v1::WORKSPACE_STATE_PLACED; }))
      << get("ws-vm-2").pending_reason();
  v1::Workspace placed = get("ws-vm-2");
  EXPECT_THAT(placed.device_spec().vfio().pci_addresses(),
              ::testing::ElementsAre("0000:3b:00.0", "0000:3b:00.1"));
  EXPECT_THAT(placed.device_spec().vfio().device_paths(),
              ::testing::ElementsAre("/dev/vfio/vfio", "/dev/vfio/33"));
  EXPECT_EQ(not_bound("gpu-vm"), 0);

  // The same tree in a container pool: the GPU on nvidia serves a
  // container, the one on vfio-pci does not. Without the driver's files its
  // GPUs have stand-in UUIDs (PCI-<address>), the same as the VM node's. A
  // GPU is one machine's: while the VM node is registered, the machine
  // cannot register as another node; the VMs stop and the node goes first.
  std::vector<std::string> host_flags = AgentFlags("vfio-host", "gpu-host", "host-e2e");
  host_flags.push_back("--once");
  {
    AgentProcess agent(host_flags);
    EXPECT_NE(agent.Wait(), 0);
    EXPECT_THAT(agent.Log(), HasSubstr("is claimed by node vm-e2e"));
  }
  for (const char* id : {"ws-vm-1", "ws-vm-2"}) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    v1::StopWorkspaceRequest request;
    request.set_workspace_id(id);
    v1::Workspace stopped;
    ASSERT_TRUE(placement->StopWorkspace(&context, request, &stopped).ok()) << id;
  }
  {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name("vm-e2e");
    v1::Empty removed;
    ASSERT_TRUE(inventory_->RemoveNode(&context, request, &removed).ok());
  }
  {
    AgentProcess agent(host_flags);
    ASSERT_EQ(agent.Wait(), 0) << agent.Log() << server_->Log();
  }
  v1::Workspace container = place("ws-c-1", "h100-1x");
  ASSERT_EQ(container.state(), v1::WORKSPACE_STATE_PLACED) << container.pending_reason();
  EXPECT_EQ(container.gpus(0).pci_address(), "0000:3b:00.0");
  v1::Workspace refused = place("ws-c-2", "h100-1x");
  ASSERT_EQ(refused.state(), v1::WORKSPACE_STATE_PENDING);
  EXPECT_EQ(refused.pending().code(), v1::PENDING_REASON_CODE_GPUS_NOT_BOUND);
  EXPECT_THAT(refused.pending_reason(),
              HasSubstr("GPU 0000:86:00.0 is bound to vfio-pci, which a container cannot use"));
  EXPECT_EQ(not_bound("gpu-host"), 1);
}

}  // namespace
}  // namespace wsched
