#include "server/agent/nvidia_proc.h"

#include "gtest/gtest.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using testing::Tree;

TEST(DriverVersionTest, ParsesProprietaryAndOpenModuleLines) {
  EXPECT_EQ(ParseProcDriverVersion("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  "
                                   "Tue Mar  5 22:23:56 UTC 2024"),
            "550.54.15");
  EXPECT_EQ(ParseProcDriverVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                   "535.129.03  Release Build  (dvs-builder@U16)  Thu Oct 19"),
            "535.129.03");
  EXPECT_EQ(ParseProcDriverVersion("NVRM version: NVIDIA UNIX aarch64 Kernel Module  470.57"),
            "470.57");
  EXPECT_EQ(ParseProcDriverVersion("GCC version: gcc version 12.2.0"), "");
  EXPECT_EQ(ParseProcDriverVersion("NVRM version: garbage"), "");
}

TEST(DriverVersionTest, PrefersSysModuleThenProc) {
  EXPECT_EQ(*ReadDriverVersion(RootedFs(Tree("h100-8gpu"))), "550.54.15");
  EXPECT_EQ(*ReadDriverVersion(RootedFs(Tree("desktop-usb-group"))), "550.54.15");
  EXPECT_EQ(*ReadDriverVersion(RootedFs(Tree("no-driver"))), "");
}

TEST(GpuInformationTest, ParsesTabSeparatedFields) {
  GpuInformation info = ParseGpuInformation(
      "Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   \t\t 0\nGPU UUID: \t "
      "GPU-abcd-1234\nBus Location: \t 0000:07:00.0\nDevice Minor: \t 3\n");
  EXPECT_EQ(info.model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(info.uuid, "GPU-abcd-1234");
  EXPECT_EQ(info.device_minor, 3);
}

TEST(GpuInformationTest, AbsentFileIsNoInformation) {
  absl::StatusOr<std::optional<GpuInformation>> info =
      ReadGpuInformation(RootedFs(Tree("no-driver")), "0000:41:00.0");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->has_value());
}

TEST(ProcDevicesTest, FindsCharacterMajorsOnly) {
  constexpr char kDevices[] =
      "Character devices:\n  1 mem\n195 nvidia-frontend\n508 nvidia-uvm\n\n"
      "Block devices:\n  9 nvidia-uvm\n";
  EXPECT_EQ(ParseCharDeviceMajor(kDevices, "nvidia-uvm"), 508);
  EXPECT_EQ(ParseCharDeviceMajor(kDevices, "nvidia-caps"), std::nullopt);
  EXPECT_EQ(ParseCharDeviceMajor("Block devices:\n  9 md\n", "md"), std::nullopt);
  // Found by fuzzing: a negative or out-of-range number is no major.
  EXPECT_EQ(ParseCharDeviceMajor("Character devices:\n-37 nvidia-uvm\n", "nvidia-uvm"), std::nullopt);
  EXPECT_EQ(ParseCharDeviceMajor("Character devices:\n4096 nvidia-uvm\n", "nvidia-uvm"), std::nullopt);
  EXPECT_EQ(ParseCharDeviceMajor("Character devices:\n4095 nvidia-uvm\n", "nvidia-uvm"), 4095);
}

TEST(ControlDevicesTest, UvmTakesItsMajorFromProcDevices) {
  absl::StatusOr<std::vector<core::DeviceNode>> devices =
      ReadControlDevices(RootedFs(Tree("h100-8gpu")));
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<core::DeviceNode> expected = {
      {.path = "/dev/nvidiactl", .type = 'c', .major = 195, .minor = 255},
      {.path = "/dev/nvidia-modeset", .type = 'c', .major = 195, .minor = 254},
      {.path = "/dev/nvidia-uvm", .type = 'c', .major = 508, .minor = 0},
      {.path = "/dev/nvidia-uvm-tools", .type = 'c', .major = 508, .minor = 1},
  };
  EXPECT_EQ(*devices, expected);
}

TEST(ControlDevicesTest, GpuNodeIsMajor195) {
  EXPECT_EQ(GpuDeviceNode(5),
            (core::DeviceNode{.path = "/dev/nvidia5", .type = 'c', .major = 195, .minor = 5}));
}

}  // namespace
}  // namespace wsched::agent
