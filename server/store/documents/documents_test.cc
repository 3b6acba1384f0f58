#include "server/store/documents/documents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "server/core/test_mig.h"

namespace wsched::store::documents {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(WSCHED_SOURCE_DIR "/tests/fixtures/storage_v1/documents/") + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

Origin V1(absl::string_view table, absl::string_view row) { return {table, row, 1}; }

core::WorkspaceClass RichClass() {
  core::WorkspaceClass c;
  c.id = "gpu-8-vm";
  c.display_name = "8 GPUs";
  c.description = "a VM";
  c.category = "gpu";
  c.resources = {90000, 96000, 687194767360, 858993459200, 1099511627776};
  c.gpu = {8, {"A100", "H100"}, core::Isolation::kVm};
  c.devices = {{"/dev/kvm", 'c', 10, 232, "rw"}, {"/dev/net/tun", 'c', 10, 200, "rwm"}};
  c.pool_selector = {{"workload", "gpu"}};
  c.credits_per_minute_milli = 32000;
  c.is_default = true;
  c.deprecated = true;
  return c;
}

core::NodePool RichPool() {
  core::NodePool p;
  p.id = "gpu-a100";
  p.labels = {{"gpu", "a100"}, {"workload", "gpu"}};
  p.shape = {94000, 650LL << 30, 1LL << 40, 2LL << 40, 8, "A100"};
  p.min_size = 1;
  p.max_size = 16;
  p.scale_down.unneeded = absl::Seconds(300);
  p.scale_down.delay_after_add = absl::Seconds(60);
  p.scale_down.schedule = {false, "Europe/Berlin",
                           {{{{absl::Weekday::saturday, absl::Weekday::sunday}, 0, 1440}, true}}};
  p.max_node_provision_time = absl::Seconds(1200);
  p.warm_buffer = {2, "+01:00", {{{{}, 1320, 360}, 0}, {{{absl::Weekday::monday}, 480, 1080}, 3}}};
  p.allow_unsafe_iommu = true;
  p.gpu_binding = core::GpuBinding::kVfio;
  p.driver_install = core::DriverInstall::kCluster;
  return p;
}

core::NodeInfo RichNode() {
  core::NodeInfo n;
  n.name = "node-c";
  n.pool = "gpu-a100";
  n.provider_id = "gce://p/z/i-1";
  n.cpu_millis = 96000;
  n.memory_bytes = 687194767360;
  n.ephemeral_storage_bytes = 1;
  n.disk_bytes = 2;
  n.kernel_version = "5.15.0-91-generic";
  n.os_id = "ubuntu";
  n.os_version = "22.04";
  n.driver_version = "550.54.15";
  core::Gpu g;
  g.index = 0;
  g.uuid = "GPU-c0";
  g.pci_address = "0000:07:00.0";
  g.model = "NVIDIA A100-SXM4-80GB";
  g.memory_bytes = 85899345920;
  g.numa_node = 0;
  g.iommu_group = 12;
  g.iommu_group_members = {{"0000:07:00.1", "0x040300", "0x10de", "vfio-pci"},
                           {"0000:07:00.2", "0x0c0330", "0x10de", ""},
                           {"0000:06:00.0", "0x060400", "0x10b5"}};
  g.driver = "vfio-pci";
  g.health_reason = "XID 79";
  g.unhealthy_since = absl::FromUnixMicros(1764600000123456);
  g.reported_healthy_since = absl::FromUnixMicros(1764600300000000);
  g.cdi_device = "nvidia.com/gpu=0";
  core::Gpu h = g;
  h.index = 1;
  h.uuid = "GPU-c1";
  h.healthy = false;
  h.numa_node = -1;
  h.iommu_group = -1;
  h.iommu_group_members.clear();
  h.driver.reset();  // An agent that does not report drivers.
  h.reported_healthy_since = absl::InfinitePast();
  h.mig = core::testing::H200MixedLayout();
  g.links = {core::testing::NvlinkTo(1, 12)};
  h.links = {core::testing::NvlinkTo(0, 12), {5, core::GpuLinkKind::kSys, 0}};
  n.gpus = {g, h};
  n.control_devices = {{"/dev/nvidiactl", 'c', 195, 255, "rw"}};
  n.cdi = {core::CdiMode::kNvidia, "/etc/cdi", {{"/dev/fuse", "wsched.io/device=fuse"}}, {"libcuda mismatch"}};
  return n;
}

core::HandOff CdiHandOff(core::CdiMode mode) {
  core::HandOff h;
  h.gpus = {{0, "GPU-a", "0000:18:00.0", "H100"}, {3, "GPU-b", "0000:2a:00.0", "H100"}};
  core::CdiHandOff cdi;
  cdi.mode = mode;
  cdi.device_names = {"wsched.io/gpu=GPU-a", "wsched.io/gpu=GPU-b", "wsched.io/device=fuse"};
  if (mode == core::CdiMode::kInline) {
    cdi.spec_json = R"({"cdiVersion":"0.6.0"})";
  } else {
    cdi.env = {"NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b"};
    cdi.podman_args = {"--device", "wsched.io/gpu=GPU-a"};
    cdi.kubernetes_node_name = "node-a";
    cdi.kubernetes_annotations = {{"cdi.k8s.io/wsched_workspace", "wsched.io/gpu=GPU-a"}};
    cdi.kubernetes_unnamed_devices = {"/dev/net/tun"};
  }
  h.cdi = cdi;
  h.extra_devices = {{"/dev/fuse", 'c', 10, 229, "rwm"}};
  return h;
}

core::HandOff VfioHandOff() {
  core::HandOff h;
  h.gpus = {{6, "GPU-v", "0000:ba:00.0", "H100"}};
  h.vfio = core::VfioHandOff{{"0000:ba:00.0"}, {"/dev/vfio/vfio", "/dev/vfio/15"}, {"--device", "path=/x"}};
  h.extra_devices = {{"/dev/kvm", 'c', 10, 232, "rwm"}};
  return h;
}

SignalRow RichSignal() {
  SignalRow s;
  s.pool = "gpu-a100";
  s.generation = 7;
  s.current_size = 3;
  s.target_size = 2;
  s.nodes_to_remove = {"node-c2"};
  s.lost_nodes = {"node-c3"};
  s.reasons = {SignalReason::kPendingWorkspaces, SignalReason::kSteady};
  s.detail = "why";
  s.backoff_until = absl::FromUnixSeconds(1764600600);
  return s;
}

TEST(DocumentsTest, EveryDocumentRoundTrips) {
  EXPECT_EQ(*DecodeClass(EncodeClass(RichClass()), V1("classes", "c")), RichClass());
  core::WorkspaceClass plain;
  plain.id = "cpu";
  EXPECT_EQ(*DecodeClass(EncodeClass(plain), V1("classes", "cpu")), plain);
  EXPECT_EQ(*DecodePool(EncodePool(RichPool()), V1("pools", "p")), RichPool());
  core::NodePool constant;
  constant.id = "cpu";
  constant.warm_buffer = core::WarmBuffer::Constant(3);
  EXPECT_EQ(*DecodePool(EncodePool(constant), V1("pools", "cpu")), constant);
  core::DriverPolicyEntry entry{"5.15.0-*-generic", "ubuntu", "22.04", "550.54.15", "550", "repo"};
  EXPECT_EQ(*DecodeDriverPolicy(EncodeDriverPolicy(entry), V1("driver_policy", "0")), entry);
  EXPECT_EQ(*DecodeNodeInfo(EncodeNodeInfo(RichNode()), V1("nodes", "n")), RichNode());
  core::NodeInfo bare;
  bare.name = "bare";
  EXPECT_EQ(*DecodeNodeInfo(EncodeNodeInfo(bare), V1("nodes", "bare")), bare);
  for (const core::HandOff& h :
       {CdiHandOff(core::CdiMode::kInline), CdiHandOff(core::CdiMode::kWsched),
        CdiHandOff(core::CdiMode::kNvidia), VfioHandOff(), core::HandOff{}}) {
    EXPECT_EQ(*DecodeHandOff(EncodeHandOff(h), V1("workspaces", "w")), h) << EncodeHandOff(h);
  }
  EXPECT_EQ(*DecodeSignal(EncodeSignal(RichSignal()), V1("scaling_signals", "p")), RichSignal());
  EXPECT_EQ(*DecodeSignal(EncodeSignal(SignalRow{}), V1("scaling_signals", "p")), SignalRow{});
}

TEST(DocumentsTest, ASlicesHandOffRoundTrips) {
  core::HandOff h = CdiHandOff(core::CdiMode::kWsched);
  h.gpus.clear();
  h.slice = core::AssignedSlice{
      {2, "GPU-a", "0000:18:00.0", "NVIDIA H200"}, 5, 0, "MIG-5a", "2g.35gb", 2};
  EXPECT_EQ(*DecodeHandOff(EncodeHandOff(h), V1("workspaces", "w")), h) << EncodeHandOff(h);
  // The usage ledger reads these two paths of the stored document.
  nlohmann::json stored = nlohmann::json::parse(EncodeHandOff(h));
  EXPECT_EQ(stored["slice"]["profile"], "2g.35gb");
  EXPECT_EQ(stored["slice"]["compute_slices"], 2);
  EXPECT_TRUE(stored["gpus"].empty());
}

TEST(DocumentsTest, VersionOneClassesDecode) {
  auto vm = DecodeClass(Fixture("class-gpu-8-vm.json"), V1("classes", "gpu-8-vm"));
  ASSERT_TRUE(vm.ok()) << vm.status();
  core::WorkspaceClass want = RichClass();
  want.display_name = "8";
  want.description = "d";
  want.devices.resize(1);
  want.is_default = false;
  EXPECT_EQ(*vm, want);
  auto cpu = DecodeClass(Fixture("class-cpu-dev.json"), V1("classes", "cpu-dev"));
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->resources.cpu_request_millis, 2000);
  EXPECT_EQ(cpu->resources.memory_bytes, 8LL << 30);
  EXPECT_EQ(cpu->gpu.isolation, core::Isolation::kContainer);
  EXPECT_EQ(cpu->devices, (std::vector<core::DeviceNode>{{"/dev/fuse", 'c', 10, 229, "rwm"},
                                                          {"/dev/net/tun", 'c', 10, 200, "rwm"}}));
  EXPECT_TRUE(cpu->is_default);
  EXPECT_EQ(cpu->credits_per_minute_milli, 250);
  for (const char* name : {"class-gpu-1.json", "class-gpu-1-inline.json", "class-gpu-1-vm.json",
                           "class-old-cpu.json"}) {
    EXPECT_TRUE(DecodeClass(Fixture(name), V1("classes", name)).ok()) << name;
  }
  EXPECT_EQ(DecodeClass(Fixture("class-gpu-1-vm.json"), V1("classes", "vm"))->gpu.isolation,
            core::Isolation::kVm);
  EXPECT_TRUE(DecodeClass(Fixture("class-old-cpu.json"), V1("classes", "old"))->deprecated);
}

TEST(DocumentsTest, AClassIdlePolicyRoundTripsAndOlderClassesHaveNone) {
  core::WorkspaceClass stop = RichClass();
  stop.idle = core::IdlePolicy{5, absl::Minutes(30), core::IdleAction::kStop, absl::Minutes(5)};
  EXPECT_EQ(*DecodeClass(EncodeClass(stop), V1("classes", "c")), stop);
  core::WorkspaceClass notify = RichClass();
  notify.idle = core::IdlePolicy{10, absl::Hours(2), core::IdleAction::kNotify, absl::ZeroDuration()};
  EXPECT_EQ(*DecodeClass(EncodeClass(notify), V1("classes", "c")), notify);
  // The field is written only when set, so a class without one stores
  // exactly what it stored before.
  EXPECT_EQ(EncodeClass(RichClass()).find("idle"), std::string::npos);
  for (const char* name : {"class-gpu-1.json", "class-gpu-1-inline.json", "class-gpu-1-vm.json",
                           "class-gpu-8-vm.json", "class-old-cpu.json", "class-cpu-dev.json"}) {
    auto old = DecodeClass(Fixture(name), V1("classes", name));
    ASSERT_TRUE(old.ok()) << name << ": " << old.status();
    EXPECT_EQ(old->idle, std::nullopt) << name;
  }
  auto bad = DecodeClass(R"({"idle": {"action": "explode"}})", V1("classes", "x"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("idle.action"));
}

TEST(DocumentsTest, SlicesAndMigLayoutsRoundTripAndOlderRowsHaveNone) {
  core::WorkspaceClass slice;
  slice.id = "slice";
  slice.gpu.models = {"H200"};
  slice.gpu.mig_profiles = {"1g.18gb", "2g.35gb"};
  EXPECT_EQ(*DecodeClass(EncodeClass(slice), V1("classes", "slice")), slice);
  core::NodePool pool = RichPool();
  pool.gpu_binding = core::GpuBinding::kHost;
  pool.mig = {core::MigLayoutKind::kFixed, {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"}};
  EXPECT_EQ(*DecodePool(EncodePool(pool), V1("pools", "p")), pool);
  pool.mig = {core::MigLayoutKind::kByDemand, {}};
  EXPECT_EQ(*DecodePool(EncodePool(pool), V1("pools", "p")), pool);
  // Written only when set: other classes and pools store what they stored before.
  EXPECT_EQ(EncodeClass(RichClass()).find("mig"), std::string::npos);
  EXPECT_EQ(EncodePool(RichPool()).find("mig"), std::string::npos);
  for (const char* name : {"class-gpu-1.json", "class-gpu-8-vm.json", "class-cpu-dev.json"}) {
    auto old = DecodeClass(Fixture(name), V1("classes", name));
    ASSERT_TRUE(old.ok()) << name << ": " << old.status();
    EXPECT_TRUE(old->gpu.mig_profiles.empty()) << name;
  }
  for (const char* name : {"pool-pool-a.json", "pool-pool-b.json", "pool-pool-c.json"}) {
    auto old = DecodePool(Fixture(name), V1("pools", name));
    ASSERT_TRUE(old.ok()) << name << ": " << old.status();
    EXPECT_EQ(old->mig, core::MigLayout{}) << name;
  }
  auto bad = DecodePool(R"({"mig": {"layout": "sideways"}})", V1("pools", "p2"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(bad.status().message(), HasSubstr("pools row p2: field mig.layout"));
  auto bad_profiles = DecodeClass(R"({"gpu": {"mig_profiles": "1g.18gb"}})", V1("classes", "x"));
  EXPECT_THAT(bad_profiles.status().message(), HasSubstr("field gpu.mig_profiles"));
}

TEST(DocumentsTest, VersionOnePoolsAndDriverPolicyDecode) {
  auto c = DecodePool(Fixture("pool-pool-c.json"), V1("pools", "pool-c"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->shape, (core::NodeShape{94000, 1, 2, 3, 8, "A100"}));
  EXPECT_TRUE(c->allow_unsafe_iommu);
  EXPECT_EQ(c->scale_down.unneeded, absl::Seconds(300));
  EXPECT_EQ(c->scale_down.delay_after_add, absl::Seconds(60));
  EXPECT_EQ(c->max_node_provision_time, absl::Seconds(1200));
  EXPECT_EQ(c->scale_down.schedule,
            (core::ScaleDownSchedule{false, "UTC",
                                     {{{{absl::Weekday::saturday, absl::Weekday::sunday}, 0, 1440}, true}}}));
  EXPECT_EQ(c->warm_buffer, (core::WarmBuffer{1, "+01:00", {{{{}, 1320, 360}, 0}}}));
  auto a = DecodePool(Fixture("pool-pool-a.json"), V1("pools", "pool-a"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->labels, (std::map<std::string, std::string>{{"node", "a"}}));
  EXPECT_EQ(a->max_size, 8);
  EXPECT_EQ(a->scale_down.delay_after_add, absl::Minutes(5));
  EXPECT_EQ(a->warm_buffer.time_zone, "Europe/Berlin");
  ASSERT_EQ(a->warm_buffer.windows.size(), 1u);
  EXPECT_EQ(a->warm_buffer.windows[0].nodes, 2);
  EXPECT_EQ(a->warm_buffer.windows[0].when.days.size(), 5u);
  EXPECT_EQ(a->warm_buffer.windows[0].when.start_minute, 8 * 60);
  EXPECT_FALSE(a->scale_down.schedule.windows.at(0).allow);
  auto b = DecodePool(Fixture("pool-pool-b.json"), V1("pools", "pool-b"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->warm_buffer, core::WarmBuffer::Constant(1));
  EXPECT_TRUE(b->scale_down.schedule.empty());
  // A row from before the scale-down and provisioning fields existed.
  auto old = DecodePool(R"({"id": "cpu", "max_size": 4, "warm_buffer": 3})", V1("pools", "cpu"));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->scale_down.unneeded, absl::Minutes(10));
  EXPECT_EQ(old->max_node_provision_time, absl::Minutes(15));
  EXPECT_EQ(old->warm_buffer, core::WarmBuffer::Constant(3));
  auto entry = DecodeDriverPolicy(Fixture("driver-policy-1.json"), V1("driver_policy", "1"));
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(*entry, (core::DriverPolicyEntry{"5.15.0-*-generic", "ubuntu", "", "550.54.15", "550",
                                             "registry.example.com/nvidia/driver"}));
}

TEST(DocumentsTest, VersionOneNodesDecode) {
  auto c = DecodeNodeInfo(Fixture("node-node-c.json"), V1("nodes", "node-c"));
  ASSERT_TRUE(c.ok()) << c.status();
  core::NodeInfo want = RichNode();
  want.pool = "pool-c";
  // Version one knew no drivers: not reported.
  want.gpus[0].driver.reset();
  for (core::Gpu& gpu : want.gpus) {  // Nor MIG slices and links.
    gpu.mig.reset();
    gpu.links.clear();
  }
  want.gpus[0].iommu_group_members = {{"0000:07:00.1", "0x040300", "0x10de"}};
  want.gpus[0].health_reason = want.gpus[1].health_reason = "XID 79: fell off the bus";
  want.control_devices.push_back({"/dev/nvidia-uvm", 'c', 511, 0, "rwm"});
  want.gpus[1].cdi_device = "nvidia.com/gpu=1";
  want.cdi.problems = {"libcuda.so is 535.104.05, the loaded driver 550.54.15"};
  EXPECT_EQ(*c, want);
  auto a = DecodeNodeInfo(Fixture("node-node-a.json"), V1("nodes", "node-a"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->cdi.mode, core::CdiMode::kWsched);
  EXPECT_EQ(a->gpus.size(), 8u);
  EXPECT_EQ(a->gpus[0].index, 0);
  EXPECT_EQ(a->gpus[7].index, 7);
  EXPECT_THAT(a->gpus[0].cdi_device, HasSubstr("wsched.io/gpu=GPU-a-"));
  auto b = DecodeNodeInfo(Fixture("node-node-b.json"), V1("nodes", "node-b"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->cdi, core::NodeCdi{});
  EXPECT_TRUE(b->gpus[0].healthy);
  EXPECT_FALSE(b->gpus[1].healthy);
  EXPECT_EQ(b->gpus[1].health_reason, "2 uncorrected ECC error(s) since the driver loaded");
  EXPECT_NE(b->gpus[1].unhealthy_since, absl::InfinitePast());
}

TEST(DocumentsTest, VersionOnePlacementsAndSignalsDecode) {
  auto gpu = DecodeHandOff(Fixture("placement-ws-gpu.json"), V1("workspaces", "ws-gpu"));
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ASSERT_EQ(gpu->gpus.size(), 1u);
  EXPECT_EQ(gpu->gpus[0].index, 0);
  ASSERT_TRUE(gpu->cdi.has_value());
  EXPECT_EQ(gpu->cdi->mode, core::CdiMode::kWsched);
  EXPECT_EQ(gpu->cdi->kubernetes_node_name, "node-a");
  EXPECT_EQ(gpu->extra_devices, (std::vector<core::DeviceNode>{{"/dev/fuse", 'c', 10, 229, "rwm"}}));
  auto inline_ = DecodeHandOff(Fixture("placement-ws-inline.json"), V1("workspaces", "ws-inline"));
  ASSERT_TRUE(inline_.ok()) << inline_.status();
  ASSERT_TRUE(inline_->cdi.has_value());
  EXPECT_EQ(inline_->cdi->mode, core::CdiMode::kInline);
  EXPECT_THAT(inline_->cdi->spec_json, HasSubstr("cdiVersion"));
  auto vm = DecodeHandOff(Fixture("placement-ws-vm.json"), V1("workspaces", "ws-vm"));
  ASSERT_TRUE(vm.ok()) << vm.status();
  EXPECT_FALSE(vm->cdi.has_value());
  ASSERT_TRUE(vm->vfio.has_value());
  EXPECT_EQ(vm->vfio->pci_addresses, std::vector<std::string>{"0000:ba:00.0"});
  for (const char* name : {"placement-ws-cpu.json", "placement-ws-pending.json"}) {
    EXPECT_TRUE(DecodeHandOff(Fixture(name), V1("workspaces", name)).ok()) << name;
  }
  auto c = DecodeSignal(Fixture("signal-pool-c.json"), V1("scaling_signals", "pool-c"));
  ASSERT_TRUE(c.ok()) << c.status();
  SignalRow want = RichSignal();
  want.pool = "pool-c";
  want.reasons = {SignalReason::kIdleTimeout, SignalReason::kProvisioningFailed};
  want.detail = "node-c2 idle for 10m";
  want.backoff_until = absl::FromUnixMicros(1764600600000000);
  EXPECT_EQ(*c, want);
  auto b = DecodeSignal(Fixture("signal-pool-b.json"), V1("scaling_signals", "pool-b"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->reasons, std::vector<SignalReason>{SignalReason::kWarmBuffer});
  EXPECT_EQ(b->generation, 2);
  EXPECT_EQ(b->target_size, 2);
}

TEST(DocumentsTest, NewerSchemaIsRefusedNamingTableAndRow) {
  std::string json = EncodeNodeInfo(RichNode());
  auto newer = DecodeNodeInfo(json, {"nodes", "node-c", kSchemaVersion + 1});
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(newer.status().message(), HasSubstr("nodes row node-c"));
  EXPECT_THAT(newer.status().message(), HasSubstr("written by a newer wsched"));
  EXPECT_EQ(DecodeHandOff("{}", {"workspaces", "w", 9}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(DecodeClass("{}", {"classes", "c", 0}).status().code(), absl::StatusCode::kDataLoss);
}

TEST(DocumentsTest, BadDocumentsNameTheField) {
  auto bad = DecodeNodeInfo(R"({"gpus": [{"index": 0}, {"memory_bytes": "lots"}]})", V1("nodes", "n1"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(bad.status().message(), HasSubstr("nodes row n1: field gpus[1].memory_bytes"));
  auto not_json = DecodePool("{", V1("pools", "p1"));
  EXPECT_EQ(not_json.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(not_json.status().message(), HasSubstr("pools row p1"));
  auto bad_enum = DecodeClass(R"({"gpu": {"isolation": "ISOLATION_SPACESHIP"}})", V1("classes", "x"));
  EXPECT_THAT(bad_enum.status().message(), HasSubstr("field gpu.isolation"));
  auto bad_time = DecodeSignal(R"({"backoff_until": "tomorrow"})", V1("scaling_signals", "p"));
  EXPECT_THAT(bad_time.status().message(), HasSubstr("field backoff_until"));
}

}  // namespace
}  // namespace wsched::store::documents
