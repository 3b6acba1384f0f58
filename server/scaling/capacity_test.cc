#include "server/scaling/capacity.h"

#include "gtest/gtest.h"
#include "server/scaling/test_pools.h"

namespace wsched::scaling {
namespace {

using testing::GpuClass;
using testing::GpuPool;
using testing::kGiB;

TEST(DensityTest, OneGpuClassFitsAsManyAsTheNodeHasGpus) {
  EXPECT_EQ(WorkspacesPerNode(GpuPool(8).shape, GpuClass(1)), 8);
  EXPECT_EQ(WorkspacesPerNode(GpuPool(4).shape, GpuClass(1)), 4);
}

TEST(DensityTest, MultiGpuClassRoundsDown) {
  EXPECT_EQ(WorkspacesPerNode(GpuPool(8).shape, GpuClass(3)), 2);
  EXPECT_EQ(WorkspacesPerNode(GpuPool(8).shape, GpuClass(8)), 1);
  EXPECT_EQ(WorkspacesPerNode(GpuPool(4).shape, GpuClass(8)), 0);
}

TEST(DensityTest, CpuAndMemoryLowerIt) {
  // 96 CPUs: 24-CPU workspaces fit 4 of the 8 GPUs.
  EXPECT_EQ(WorkspacesPerNode(GpuPool(8).shape, GpuClass(1, 24'000)), 4);
  // 1 TiB memory: 300 GiB workspaces fit 3.
  EXPECT_EQ(WorkspacesPerNode(GpuPool(8).shape, GpuClass(1, 1'000, 300 * kGiB)), 3);
}

TEST(DensityTest, GpuClassNeverFitsACpuPool) {
  EXPECT_EQ(WorkspacesPerNode(GpuPool(0).shape, GpuClass(1)), 0);
}

TEST(DensityTest, DimensionsThePoolDoesNotDeclareDoNotLimit) {
  core::NodeShape shape{.gpus_per_node = 2};  // No CPU, memory or disk given.
  core::WorkspaceClass cls = GpuClass(1);
  cls.resources.disk_bytes = 100 * kGiB;
  EXPECT_EQ(WorkspacesPerNode(shape, cls), 2);
}

TEST(CapacityTest, HowManyFitUsesTheTightestDimension) {
  Capacity room{.gpus = 5,
                .cpu_millis = 10'000,
                .memory_bytes = 100,
                .ephemeral_storage_bytes = Capacity::kUnlimited,
                .disk_bytes = Capacity::kUnlimited};
  EXPECT_EQ(HowManyFit(room, {.gpus = 1, .cpu_millis = 3'000, .memory_bytes = 10}), 3);
  room -= Capacity{.gpus = 1, .cpu_millis = 3'000, .memory_bytes = 10};
  EXPECT_EQ(room.gpus, 4);
  EXPECT_EQ(room.cpu_millis, 7'000);
}

}  // namespace
}  // namespace wsched::scaling
