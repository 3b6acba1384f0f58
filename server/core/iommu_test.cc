#include "server/core/iommu.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

Gpu GpuInGroup(std::vector<PciDevice> members) {
  Gpu gpu;
  gpu.pci_address = "0000:01:00.0";
  gpu.iommu_group = 12;
  gpu.iommu_group_members = std::move(members);
  return gpu;
}

TEST(ClassifyPassthrough, AloneIsSafe) { EXPECT_TRUE(ClassifyPassthrough(GpuInGroup({})).safe); }

TEST(ClassifyPassthrough, OwnAudioFunctionAndBridgeAreSafe) {
  auto safety = ClassifyPassthrough(GpuInGroup({{"0000:01:00.1", "0x040300", "0x10de"},
                                                {"0000:00:01.0", "0x060400", "0x8086"}}));
  EXPECT_TRUE(safety.safe) << safety.reason;
}

TEST(ClassifyPassthrough, UsbControllerMakesItUnsafeWithReason) {
  auto safety = ClassifyPassthrough(GpuInGroup({{"0000:00:14.0", "0x0c0330", "0x8086"}}));
  EXPECT_FALSE(safety.safe);
  EXPECT_EQ(safety.reason, "IOMMU group 12 also holds 0000:00:14.0 (USB controller)");
}

TEST(ClassifyPassthrough, NoIommuIsUnsafe) {
  Gpu gpu;
  gpu.pci_address = "0000:01:00.0";
  auto safety = ClassifyPassthrough(gpu);
  EXPECT_FALSE(safety.safe);
  EXPECT_THAT(safety.reason, ::testing::HasSubstr("IOMMU is off"));
}

}  // namespace
}  // namespace wsched::core
