#include "server/core/vfio_binding.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::Optional;

// GPU 0000:3b:00.0 in group 33 with its audio function and its switch port.
Gpu ReportedGpu(const std::string& gpu_driver, const std::string& audio_driver) {
  Gpu gpu;
  gpu.pci_address = "0000:3b:00.0";
  gpu.iommu_group = 33;
  gpu.driver = gpu_driver;
  gpu.iommu_group_members = {{"0000:3a:00.0", "0x060400", "0x10b5", "pcieport"},
                             {"0000:3b:00.1", "0x040300", "0x10de", audio_driver}};
  return gpu;
}

TEST(VmBindingProblem, WholeGroupOnVfioPciIsBoundAndBridgesAreLeftAlone) {
  EXPECT_EQ(VmBindingProblem(ReportedGpu("vfio-pci", "vfio-pci")), std::nullopt);
}

TEST(VmBindingProblem, NamesTheMemberAndItsDriver) {
  EXPECT_THAT(VmBindingProblem(ReportedGpu("vfio-pci", "snd_hda_intel")),
              Optional(std::string("GPU 0000:3b:00.0: group 33 member 0000:3b:00.1 is bound to "
                                   "snd_hda_intel, not vfio-pci")));
}

TEST(VmBindingProblem, TheGpuItselfComesFirst) {
  EXPECT_THAT(VmBindingProblem(ReportedGpu("nvidia", "snd_hda_intel")),
              Optional(std::string("GPU 0000:3b:00.0 (group 33) is bound to nvidia, not vfio-pci")));
}

TEST(VmBindingProblem, UnboundAndUnreportedMembersAreNotBound) {
  EXPECT_THAT(VmBindingProblem(ReportedGpu("vfio-pci", "")),
              Optional(std::string("GPU 0000:3b:00.0: group 33 member 0000:3b:00.1 is bound to "
                                   "no driver, not vfio-pci")));
  Gpu gpu = ReportedGpu("vfio-pci", "vfio-pci");
  gpu.iommu_group_members[1].driver.reset();
  EXPECT_THAT(VmBindingProblem(gpu), Optional(testing::HasSubstr("has no reported driver")));
}

TEST(VmBindingProblem, AnAgentThatReportsNoDriversIsNotJudged) {
  Gpu gpu = ReportedGpu("nvidia", "snd_hda_intel");
  gpu.driver.reset();
  EXPECT_EQ(VmBindingProblem(gpu), std::nullopt);
  EXPECT_EQ(ContainerBindingProblem(gpu), std::nullopt);
}

TEST(ContainerBindingProblem, OnlyAGpuOnVfioPciIsRefused) {
  EXPECT_EQ(ContainerBindingProblem(ReportedGpu("nvidia", "vfio-pci")), std::nullopt);
  EXPECT_EQ(ContainerBindingProblem(ReportedGpu("", "snd_hda_intel")), std::nullopt);
  EXPECT_THAT(ContainerBindingProblem(ReportedGpu("vfio-pci", "snd_hda_intel")),
              Optional(std::string("GPU 0000:3b:00.0 is bound to vfio-pci, which a container "
                                   "cannot use")));
}

TEST(ContainerBindingProblem, AGpuInMigModeIsNotHandedOutWhole) {
  Gpu gpu = ReportedGpu("nvidia", "snd_hda_intel");
  gpu.mig = GpuMig{.enabled = false, .pending_enabled = true};
  EXPECT_EQ(ContainerBindingProblem(gpu), std::nullopt) << "whole until the GPU is reset";
  gpu.mig->enabled = true;
  gpu.driver.reset();  // Judged even when drivers are not reported.
  EXPECT_THAT(ContainerBindingProblem(gpu),
              Optional(std::string("GPU 0000:3b:00.0 is in MIG mode: a container can use its "
                                   "slices, not the whole GPU")));
}

TEST(PoolBindingProblem, FollowsWhatThePoolServes) {
  Gpu on_nvidia = ReportedGpu("nvidia", "snd_hda_intel");
  EXPECT_EQ(PoolBindingProblem(on_nvidia, GpuBinding::kHost), std::nullopt);
  EXPECT_NE(PoolBindingProblem(on_nvidia, GpuBinding::kVfio), std::nullopt);
  Gpu on_vfio = ReportedGpu("vfio-pci", "vfio-pci");
  EXPECT_NE(PoolBindingProblem(on_vfio, GpuBinding::kHost), std::nullopt);
  EXPECT_EQ(PoolBindingProblem(on_vfio, GpuBinding::kVfio), std::nullopt);
}

TEST(GpuBindingName, RoundTrips) {
  for (GpuBinding binding : {GpuBinding::kHost, GpuBinding::kVfio}) {
    EXPECT_EQ(ParseGpuBinding(GpuBindingName(binding)), binding);
  }
  EXPECT_EQ(ParseGpuBinding("VFIO"), std::nullopt);
  EXPECT_EQ(ParseGpuBinding(""), std::nullopt);
}

}  // namespace
}  // namespace wsched::core
