#include "server/placement/vfio.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeGpuNode;
using testing::GpuPool;

TEST(BuildVfioSpec, PassesTheWholeGroupButNotItsBridge) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");  // GPU 3: group 43 at 0000:1b:00.0.
  absl::StatusOr<VfioSpec> spec = BuildVfioSpec(node, {3}, GpuPool("gpu-h100", "h100"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->iommu_groups, ElementsAre(43));
  EXPECT_THAT(spec->pci_addresses, ElementsAre("0000:1b:00.0", "0000:1b:00.1"));
  EXPECT_THAT(spec->bridges, ElementsAre("0000:13:01.0"));
  EXPECT_THAT(spec->device_paths, ElementsAre("/dev/vfio/vfio", "/dev/vfio/43"));
  EXPECT_THAT(spec->cloud_hypervisor_args,
              ElementsAre("--device", "path=/sys/bus/pci/devices/0000:1b:00.0/", "--device",
                          "path=/sys/bus/pci/devices/0000:1b:00.1/"));
}

TEST(BuildVfioSpec, RefusesAnUnsafeGroupUnlessThePoolAllowsIt) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  node.gpus[0].iommu_group_members.push_back({"0000:00:14.0", "0x0c0330", "0x8086"});
  core::NodePool pool = GpuPool("gpu-h100", "h100");
  absl::Status refused = BuildVfioSpec(node, {0}, pool).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("0000:00:14.0 (USB controller)"));
  EXPECT_THAT(refused.message(), HasSubstr("allow_unsafe_iommu"));

  pool.allow_unsafe_iommu = true;
  absl::StatusOr<VfioSpec> spec = BuildVfioSpec(node, {0}, pool);
  ASSERT_TRUE(spec.ok()) << spec.status();
  // The whole group goes, the USB controller included: that is what "unsafe" means.
  EXPECT_THAT(spec->pci_addresses, ElementsAre("0000:00:14.0", "0000:18:00.0", "0000:18:00.1"));
}

TEST(BuildVfioSpec, RefusesAGroupNotBoundToVfioPciNamingTheMember) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  testing::ReportDrivers(node, "vfio-pci");
  core::NodePool pool = GpuPool("gpu-h100", "h100");
  pool.gpu_binding = core::GpuBinding::kVfio;
  ASSERT_TRUE(BuildVfioSpec(node, {3}, pool).ok());

  node.gpus[3].iommu_group_members[0].driver = "snd_hda_intel";
  absl::Status refused = BuildVfioSpec(node, {3}, pool).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("GPU 0000:1b:00.0: group 43 member 0000:1b:00.1 is "
                                           "bound to snd_hda_intel, not vfio-pci"));
}

TEST(BuildVfioSpec, SharedGroupGoesWholeAndIsListedOnce) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  node.gpus[1].iommu_group = 40;
  node.gpus[0].iommu_group_members.push_back({"0000:19:00.0", "0x030200", "0x10de"});
  node.gpus[1].iommu_group_members.push_back({"0000:18:00.0", "0x030200", "0x10de"});
  core::NodePool pool = GpuPool("gpu-h100", "h100");

  absl::Status partial = BuildVfioSpec(node, {0}, pool).status();
  EXPECT_EQ(partial.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(partial.message(), HasSubstr("shares IOMMU group 40 with GPU 1"));

  absl::StatusOr<VfioSpec> spec = BuildVfioSpec(node, {1, 0}, pool);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->iommu_groups, ElementsAre(40));
  EXPECT_THAT(spec->pci_addresses,
              ElementsAre("0000:18:00.0", "0000:18:00.1", "0000:19:00.0", "0000:19:00.1"));
  EXPECT_THAT(spec->device_paths, ElementsAre("/dev/vfio/vfio", "/dev/vfio/40"));
  EXPECT_EQ(spec->cloud_hypervisor_args.size(), 8u);
}

TEST(BuildVfioSpec, RefusesImpossibleOrMalformedInput) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  core::NodePool pool = GpuPool("gpu-h100", "h100");
  pool.allow_unsafe_iommu = true;  // Even then: no IOMMU, no passthrough.
  node.gpus[2].iommu_group = -1;
  EXPECT_EQ(BuildVfioSpec(node, {2}, pool).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(BuildVfioSpec(node, {9}, pool).status().code(), absl::StatusCode::kNotFound);
  node.gpus[4].pci_address = "0000:1c:00.0/../../x";
  EXPECT_EQ(BuildVfioSpec(node, {4}, pool).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildVfioSpec(node, {5}, GpuPool("other", "h100")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace wsched::placement
