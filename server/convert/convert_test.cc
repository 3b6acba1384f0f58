#include "server/convert/convert.h"

#include "server/core/test_mig.h"

#include "gtest/gtest.h"

namespace wsched::convert {
namespace {

TEST(Convert, ClassRoundTripsThroughProto) {
  core::WorkspaceClass cls;
  cls.id = "gpu-h100-2";
  cls.display_name = "2x H100";
  cls.resources = {16000, 32000, int64_t{256} << 30, int64_t{100} << 30, int64_t{200} << 30};
  cls.gpu = {2, {"H100", "A100"}, core::Isolation::kVm};
  cls.devices = {{"/dev/fuse", 'c', 10, 229, "rwm"}};
  cls.pool_selector = {{"gpu", "true"}};
  cls.credits_per_minute_milli = 1500;
  cls.version = 3;
  EXPECT_EQ(FromProto(ToProto(cls)), cls);
}

TEST(Convert, ClassIdlePolicyRoundTripsThroughProto) {
  core::WorkspaceClass cls;
  cls.id = "gpu-1";
  cls.gpu.count = 1;
  cls.idle = core::IdlePolicy{5, absl::Minutes(30), core::IdleAction::kStop, absl::Minutes(5)};
  v1::WorkspaceClass proto = ToProto(cls);
  EXPECT_EQ(proto.idle().gpu_utilization_below_percent(), 5);
  EXPECT_EQ(proto.idle().idle_for().seconds(), 1800);
  EXPECT_EQ(proto.idle().action(), v1::IdlePolicy::ACTION_STOP);
  EXPECT_EQ(proto.idle().warn_before().seconds(), 300);
  EXPECT_EQ(FromProto(proto), cls);
  cls.idle = core::IdlePolicy{10, absl::Hours(1), core::IdleAction::kNotify, absl::ZeroDuration()};
  EXPECT_FALSE(ToProto(cls).idle().has_warn_before());
  EXPECT_EQ(FromProto(ToProto(cls)), cls);
  // Unspecified reads as notify; no idle message is no policy.
  v1::WorkspaceClass unspecified = ToProto(cls);
  unspecified.mutable_idle()->set_action(v1::IdlePolicy::ACTION_UNSPECIFIED);
  EXPECT_EQ(FromProto(unspecified).idle->action, core::IdleAction::kNotify);
  cls.idle.reset();
  EXPECT_FALSE(ToProto(cls).has_idle());
  EXPECT_EQ(FromProto(ToProto(cls)).idle, std::nullopt);
}

TEST(Convert, PoolRoundTripsWhatTheApiCarries) {
  core::NodePool pool;
  pool.id = "gpu-h100";
  pool.labels = {{"gpu", "h100"}};
  pool.shape = {192000, int64_t{2} << 40, 1, 2, 8, "H100"};
  pool.min_size = 1;
  pool.max_size = 4;
  pool.allow_unsafe_iommu = true;
  EXPECT_EQ(FromProto(ToProto(pool)), pool);
}

TEST(Convert, SliceClassRoundTripsThroughProto) {
  core::WorkspaceClass cls;
  cls.id = "slice-h200";
  cls.gpu.models = {"H200"};
  cls.gpu.mig_profiles = {"1g.18gb", "2g.35gb"};
  const v1::WorkspaceClass proto = ToProto(cls);
  EXPECT_EQ(proto.gpu().count(), 0);
  ASSERT_EQ(proto.gpu().mig_profiles_size(), 2);
  EXPECT_EQ(proto.gpu().mig_profiles(1), "2g.35gb");
  EXPECT_EQ(FromProto(proto), cls);
  EXPECT_TRUE(FromProto(proto).is_slice());
}

TEST(Convert, PoolMigLayoutRoundTripsThroughProto) {
  core::NodePool pool;
  pool.id = "gpu-h200";
  pool.shape = {192000, int64_t{2} << 40, 0, 0, 8, "H200"};
  pool.max_size = 2;
  EXPECT_EQ(ToProto(pool).mig().kind(), v1::MigLayout::KIND_WHOLE);
  EXPECT_EQ(FromProto(ToProto(pool)), pool);
  pool.mig = {core::MigLayoutKind::kFixed, {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"}};
  const v1::Pool proto = ToProto(pool);
  EXPECT_EQ(proto.mig().kind(), v1::MigLayout::KIND_FIXED);
  ASSERT_EQ(proto.mig().profiles_size(), 4);
  EXPECT_EQ(proto.mig().profiles(0), "3g.71gb");
  EXPECT_EQ(FromProto(proto), pool);
  pool.mig = {core::MigLayoutKind::kByDemand, {}};
  EXPECT_EQ(ToProto(pool).mig().kind(), v1::MigLayout::KIND_BY_DEMAND);
  EXPECT_EQ(FromProto(ToProto(pool)), pool);
  // Unset and unknown kinds are whole GPUs: nothing is cut that nobody asked for.
  v1::Pool unknown = ToProto(pool);
  unknown.mutable_mig()->set_kind(static_cast<v1::MigLayout::Kind>(42));
  EXPECT_EQ(FromProto(unknown).mig.kind, core::MigLayoutKind::kWhole);
  unknown.clear_mig();
  EXPECT_EQ(FromProto(unknown).mig, core::MigLayout{});
}

core::HandOff NodeSpecHandOff() {
  core::HandOff h;
  h.gpus = {{0, "GPU-a", "0000:18:00.0", "H100"}, {3, "GPU-b", "0000:2a:00.0", "H100"}};
  core::CdiHandOff cdi;
  cdi.mode = core::CdiMode::kWsched;
  cdi.device_names = {"wsched.io/gpu=GPU-a", "wsched.io/gpu=GPU-b"};
  cdi.env = {"NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b"};
  cdi.podman_args = {"--device", "wsched.io/gpu=GPU-a"};
  cdi.kubernetes_node_name = "node-a";
  cdi.kubernetes_annotations = {{"cdi.k8s.io/wsched_workspace", "wsched.io/gpu=GPU-a"}};
  cdi.kubernetes_unnamed_devices = {"/dev/net/tun"};
  h.cdi = cdi;
  h.extra_devices = {{"/dev/fuse", 'c', 10, 229, "rwm"}};
  return h;
}

TEST(Convert, HandOffFillsGpusAndDeviceSpec) {
  v1::Workspace out;
  ToProto(NodeSpecHandOff(), &out);
  ASSERT_EQ(out.gpus_size(), 2);
  EXPECT_EQ(out.gpus(1).index(), 3);
  EXPECT_EQ(out.gpus(1).pci_address(), "0000:2a:00.0");
  ASSERT_TRUE(out.device_spec().has_cdi());
  const v1::CdiSpec& cdi = out.device_spec().cdi();
  EXPECT_EQ(cdi.mode(), v1::CDI_MODE_WSCHED);
  EXPECT_EQ(cdi.env(0), "NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b");
  EXPECT_EQ(cdi.kubernetes().node_name(), "node-a");
  EXPECT_EQ(cdi.kubernetes().annotations().at("cdi.k8s.io/wsched_workspace"), "wsched.io/gpu=GPU-a");
  EXPECT_EQ(cdi.kubernetes().unnamed_devices(0), "/dev/net/tun");
  ASSERT_EQ(out.device_spec().extra_devices_size(), 1);
  EXPECT_EQ(out.device_spec().extra_devices(0).minor(), 229);
}

TEST(Convert, InlineHandOffCarriesTheSpecOnly) {
  core::HandOff h = NodeSpecHandOff();
  h.cdi->mode = core::CdiMode::kInline;
  h.cdi->spec_json = R"({"cdiVersion":"0.6.0"})";
  v1::Workspace out;
  ToProto(h, &out);
  const v1::CdiSpec& cdi = out.device_spec().cdi();
  EXPECT_EQ(cdi.spec_json(), R"({"cdiVersion":"0.6.0"})");
  EXPECT_EQ(cdi.mode(), v1::CDI_MODE_UNSPECIFIED);
  EXPECT_FALSE(cdi.has_kubernetes());
  EXPECT_EQ(cdi.env_size(), 0);
}

TEST(Convert, VfioAndEmptyHandOffs) {
  core::HandOff vm;
  vm.gpus = {{6, "GPU-v", "0000:ba:00.0", "H100"}};
  vm.vfio = core::VfioHandOff{{"0000:ba:00.0"}, {"/dev/vfio/vfio", "/dev/vfio/15"}, {"--device"}};
  v1::Workspace out;
  ToProto(vm, &out);
  ASSERT_TRUE(out.device_spec().has_vfio());
  EXPECT_EQ(out.device_spec().vfio().device_paths(1), "/dev/vfio/15");
  EXPECT_FALSE(out.device_spec().has_cdi());
  v1::Workspace empty;
  ToProto(core::HandOff{}, &empty);
  EXPECT_TRUE(empty.has_device_spec()) << "a placed workspace always has a device_spec";
  EXPECT_EQ(empty.gpus_size(), 0);
}

TEST(Convert, NodeInfoRoundTrips) {
  core::NodeInfo node;
  node.name = "n1";
  node.pool = "gpu-h100";
  node.cpu_millis = 8000;
  node.gpus.push_back({0, "GPU-1", "0000:3b:00.0", "H100", 80, 0, false, 12,
                       {{"0000:3b:00.1", "0x040300", "0x10de"}}});
  node.control_devices = {{"/dev/nvidiactl", 'c', 195, 255, "rwm"}};
  EXPECT_EQ(FromProto(ToProto(node)), node);
  EXPECT_FALSE(ToProto(node).has_cdi()) << "an inline node stores no CDI message";

  node.gpus[0].cdi_device = "wsched.io/gpu=GPU-1";
  node.cdi = {core::CdiMode::kWsched, "/var/run/cdi", {{"/dev/fuse", "wsched.io/device=fuse"}},
              {"libnvidia-ml.so.550.54.15 not found"}};
  EXPECT_EQ(ToProto(node).cdi().mode(), v1::CDI_MODE_WSCHED);
  EXPECT_EQ(FromProto(ToProto(node)), node);

  node.gpus[0].mig = core::testing::H200MixedLayout();
  node.gpus[0].links = {core::testing::NvlinkTo(1, 18), {2, core::GpuLinkKind::kPxb, 0}};
  EXPECT_EQ(ToProto(node).gpus(0).links(0).kind(), v1::GPU_LINK_KIND_NVLINK);
  EXPECT_EQ(FromProto(ToProto(node)), node);
}

}  // namespace
}  // namespace wsched::convert
