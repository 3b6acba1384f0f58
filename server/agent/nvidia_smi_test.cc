#include "server/agent/nvidia_smi.h"

#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <ostream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "server/agent/agent_log.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::FakeNvidiaSmi;
using testing::ScratchDir;

constexpr int64_t kMiB = 1 << 20;

TEST(NvidiaSmiCsvTest, ParsesEveryColumn) {
  absl::StatusOr<std::vector<GpuUsage>> gpus = ParseNvidiaSmiCsv(
      "0, GPU-aaaa, 00000000:3B:00.0, NVIDIA H100 80GB HBM3, 87, 40000, 81559\n"
      "1, GPU-bbbb, 00000000:AB:00.0, NVIDIA H100 80GB HBM3, 0, 1, 81559\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0], (GpuUsage{.uuid = "GPU-aaaa",
                                  .pci_address = "0000:3b:00.0",
                                  .name = "NVIDIA H100 80GB HBM3",
                                  .utilization_percent = 87,
                                  .memory_used_bytes = 40000 * kMiB,
                                  .memory_total_bytes = 81559 * kMiB}));
  EXPECT_EQ((*gpus)[1].pci_address, "0000:ab:00.0");
}

TEST(NvidiaSmiCsvTest, EmptyOutputIsNoGpus) {
  EXPECT_TRUE(ParseNvidiaSmiCsv("").value().empty());
  EXPECT_TRUE(ParseNvidiaSmiCsv("\n\n").value().empty());
}

TEST(NvidiaSmiCsvTest, NotAvailableValuesBecomeMinusOne) {
  absl::StatusOr<std::vector<GpuUsage>> gpus =
      ParseNvidiaSmiCsv("0, GPU-aaaa, 00000000:01:00.0, NVIDIA T400, [N/A], [Not Supported], 2048");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ((*gpus)[0].utilization_percent, -1);
  EXPECT_EQ((*gpus)[0].memory_used_bytes, -1);
  EXPECT_EQ((*gpus)[0].memory_total_bytes, 2048 * kMiB);
}

struct BadLine {
  const char* name;  // Names the test case.
  const char* text;
  const char* expected_message;
  friend void PrintTo(const BadLine& line, std::ostream* out) { *out << line.name; }
};

class NvidiaSmiBadLineTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(NvidiaSmiBadLineTest, RejectsTheWholeOutputNamingTheLine) {
  std::string text = absl::StrCat(
      "0, GPU-aaaa, 00000000:3B:00.0, NVIDIA H100, 1, 2, 3\n", GetParam().text, "\n");
  absl::StatusOr<std::vector<GpuUsage>> gpus = ParseNvidiaSmiCsv(text);
  ASSERT_FALSE(gpus.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(gpus.status()));
  EXPECT_THAT(gpus.status().message(), HasSubstr("line 2"));
  EXPECT_THAT(gpus.status().message(), HasSubstr(GetParam().expected_message));
}

INSTANTIATE_TEST_SUITE_P(
    Lines, NvidiaSmiBadLineTest,
    ::testing::Values(
        BadLine{"TooFewFields", "1, GPU-bbbb, 00000000:AB:00.0, NVIDIA H100",
                "expected 7 comma-separated fields"},
        BadLine{"Prose", "No devices were found", "expected 7 comma-separated fields"},
        BadLine{"BadIndex", "x, GPU-bbbb, 00000000:AB:00.0, NVIDIA H100, 1, 2, 3", "index"},
        BadLine{"BadUuid", "1, bbbb, 00000000:AB:00.0, NVIDIA H100, 1, 2, 3", "uuid"},
        BadLine{"ShortBusId", "1, GPU-bbbb, AB:00.0, NVIDIA H100, 1, 2, 3", "pci.bus_id"},
        BadLine{"BadFunction", "1, GPU-bbbb, 00000000:AB:00.9, NVIDIA H100, 1, 2, 3",
                "pci.bus_id"},
        BadLine{"EmptyName", "1, GPU-bbbb, 00000000:AB:00.0, , 1, 2, 3", "empty name"},
        BadLine{"UtilizationOver100", "1, GPU-bbbb, 00000000:AB:00.0, NVIDIA H100, 101, 2, 3",
                "utilization.gpu"},
        BadLine{"NegativeMemory", "1, GPU-bbbb, 00000000:AB:00.0, NVIDIA H100, 1, -2, 3",
                "memory.used"},
        BadLine{"FractionalMemory", "1, GPU-bbbb, 00000000:AB:00.0, NVIDIA H100, 1, 2, 3.5",
                "memory.total"},
        // Regression (agent_parsers_fuzz): MiB * 2^20 overflowed int64.
        BadLine{"MemoryOverflowingAsBytes",
                "1, GPU-bbbb, 00000000:AB:00.0, NVIDIA H100, 1, 2, 4257000000000000006",
                "memory.total"}),
    [](const ::testing::TestParamInfo<BadLine>& info) { return std::string(info.param.name); });

TEST(PciBusIdTest, NormalisesToSysfsForm) {
  EXPECT_EQ(*NormalizePciBusId("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(*NormalizePciBusId("0000:3b:00.1"), "0000:3b:00.1");
  EXPECT_EQ(*NormalizePciBusId("00000001:C1:00.0"), "0001:c1:00.0");
  EXPECT_FALSE(NormalizePciBusId("00010000:3B:00.0").ok());
  EXPECT_FALSE(NormalizePciBusId("3B:00.0").ok());
}

// The fake binary checks it gets exactly the query the parser expects.
TEST(SampleNvidiaSmiTest, RunsTheBinaryWithTheQuery) {
  absl::StatusOr<std::vector<GpuUsage>> gpus = SampleNvidiaSmi(FakeNvidiaSmi());
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-3f9c2a71-8d4e-4b0a-9c51-2e7d6a1b8f04");
  EXPECT_EQ((*gpus)[0].pci_address, "0000:01:00.0");
  EXPECT_EQ((*gpus)[0].utilization_percent, 7);
}

TEST(SampleNvidiaSmiTest, MissingBinaryIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(SampleNvidiaSmi("/nonexistent/nvidia-smi").status()));
  EXPECT_TRUE(absl::IsNotFound(SampleNvidiaSmi("wsched-no-such-nvidia-smi").status()));
}

// These set the fake's mode through the environment, which the child inherits.
class SampleNvidiaSmiModeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("FAKE_NVIDIA_SMI_MODE");
    unsetenv("FAKE_NVIDIA_SMI_CSV");
  }
};

TEST_F(SampleNvidiaSmiModeTest, FailureCarriesNvidiaSmiExplanation) {
  setenv("FAKE_NVIDIA_SMI_MODE", "fail", 1);
  absl::StatusOr<std::vector<GpuUsage>> gpus = SampleNvidiaSmi(FakeNvidiaSmi());
  ASSERT_TRUE(absl::IsUnavailable(gpus.status())) << gpus.status();
  EXPECT_THAT(gpus.status().message(), HasSubstr("exit status 9"));
  EXPECT_THAT(gpus.status().message(), HasSubstr("couldn't communicate with the NVIDIA driver"));
}

TEST_F(SampleNvidiaSmiModeTest, AMultiLineFailureBecomesOneLogLine) {
  setenv("FAKE_NVIDIA_SMI_MODE", "mismatch", 1);
  absl::StatusOr<std::vector<GpuUsage>> gpus = SampleNvidiaSmi(FakeNvidiaSmi());
  ASSERT_TRUE(absl::IsUnavailable(gpus.status())) << gpus.status();
  EXPECT_THAT(gpus.status().message(),
              HasSubstr("exit status 18: Failed to initialize NVML: Driver/library version mismatch"
                        " | NVML library version: 575.51"));
  EXPECT_THAT(std::string(gpus.status().message()), Not(HasSubstr("\n")));

  ::testing::internal::CaptureStderr();
  Log(absl::StrCat("usage sample failed: ", gpus.status().message()));
  std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(logged.begin(), logged.end(), '\n'), 1) << logged;
  EXPECT_THAT(logged, HasSubstr("version mismatch | NVML library version: 575.51\n"));
}

TEST(AgentLog, AnyLineBreakInAMessageIsEscaped) {
  EXPECT_EQ(OneLine("installer failed:\nmake: *** [all] Error 2\r\n\n"),
            "installer failed:\\nmake: *** [all] Error 2");
  EXPECT_EQ(OneLine("a\rb"), "a\\rb");
}

TEST_F(SampleNvidiaSmiModeTest, HangIsCutOffAtTheTimeout) {
  setenv("FAKE_NVIDIA_SMI_MODE", "hang", 1);
  absl::Time start = absl::Now();
  absl::StatusOr<std::vector<GpuUsage>> gpus =
      SampleNvidiaSmi(FakeNvidiaSmi(), absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(gpus.status())) << gpus.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(SampleNvidiaSmiModeTest, MalformedOutputIsRejected) {
  ScratchDir dir;
  std::string csv = (dir.path() / "out.csv").string();
  std::ofstream(csv) << "0, GPU-aaaa, 00000000:3B:00.0\n";
  setenv("FAKE_NVIDIA_SMI_CSV", csv.c_str(), 1);
  EXPECT_TRUE(absl::IsInvalidArgument(SampleNvidiaSmi(FakeNvidiaSmi()).status()));
}

TEST(NvidiaSmiCsvTest, ParsesTheHealthColumns) {
  absl::StatusOr<std::vector<GpuUsage>> gpus = ParseNvidiaSmiCsv(
      "0, GPU-aaaa, 00000000:3B:00.0, NVIDIA H100, 1, 2, 81559, 4, Yes, No, No\n"
      "1, GPU-bbbb, 00000000:5D:00.0, NVIDIA H100, 1, 2, 81559, [N/A], [N/A], Yes, Yes\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ((*gpus)[0].ecc_uncorrected_volatile, 4);
  EXPECT_TRUE((*gpus)[0].retired_pages_pending);
  EXPECT_FALSE((*gpus)[0].remapped_rows_pending);
  EXPECT_EQ((*gpus)[0].memory_total_bytes, 81559 * kMiB);
  EXPECT_EQ((*gpus)[1].ecc_uncorrected_volatile, -1);
  EXPECT_FALSE((*gpus)[1].retired_pages_pending);
  EXPECT_TRUE((*gpus)[1].remapped_rows_pending);
  EXPECT_TRUE((*gpus)[1].remapped_rows_failure);
  EXPECT_TRUE((*gpus)[1].error_state.empty());
}

TEST(NvidiaSmiCsvTest, BadHealthColumnNamesItself) {
  absl::StatusOr<std::vector<GpuUsage>> gpus =
      ParseNvidiaSmiCsv("0, GPU-aaaa, 00000000:3B:00.0, NVIDIA H100, 1, 2, 3, 0, Maybe, No, No");
  ASSERT_FALSE(gpus.ok());
  EXPECT_THAT(gpus.status().message(), HasSubstr("retired_pages.pending"));
}

// A GPU in a bad state: its values turn into errors, or nvidia-smi cannot
// reach it at all (and says so instead of printing its line).
TEST(NvidiaSmiCsvTest, GpuStatesBecomeErrorStates) {
  absl::StatusOr<std::vector<GpuUsage>> gpus = ParseNvidiaSmiCsv(
      "0, GPU-aaaa, 00000000:3B:00.0, NVIDIA H100, [GPU requires reset], [GPU requires reset], "
      "[GPU requires reset], [GPU requires reset], No, No, No\n"
      "1, [Unknown Error], 00000000:5D:00.0, [Unknown Error], [Unknown Error], 0, 0\n"
      "Unable to determine the device handle for GPU0000:AB:00.0: GPU is lost.  Reboot the "
      "system to recover this GPU\n"
      "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 4u);
  EXPECT_EQ((*gpus)[0].error_state, "[GPU requires reset]");
  EXPECT_EQ((*gpus)[0].uuid, "GPU-aaaa");
  EXPECT_EQ((*gpus)[0].memory_total_bytes, -1);
  EXPECT_EQ((*gpus)[1].error_state, "[Unknown Error]");
  EXPECT_EQ((*gpus)[1].uuid, "");
  EXPECT_EQ((*gpus)[1].pci_address, "0000:5d:00.0");
  EXPECT_EQ((*gpus)[2], (GpuUsage{.pci_address = "0000:ab:00.0",
                                  .error_state = "GPU is lost.  Reboot the system to recover "
                                                 "this GPU"}));
  EXPECT_EQ((*gpus)[3].pci_address, "0000:0b:00.0");
  EXPECT_EQ((*gpus)[3].error_state, "Unknown Error");
}

TEST(NvidiaSmiCsvTest, KeepKnownIdentityFillsWhatABadLineLost) {
  std::vector<GpuUsage> known = {{.uuid = "GPU-a", .pci_address = "0000:3b:00.0", .name = "H100",
                                  .memory_total_bytes = 80 * kMiB}};
  std::vector<GpuUsage> fresh = {{.pci_address = "0000:3b:00.0", .error_state = "GPU is lost"}};
  std::vector<GpuUsage> merged = KeepKnownIdentity(known, fresh);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].uuid, "GPU-a");
  EXPECT_EQ(merged[0].name, "H100");
  EXPECT_EQ(merged[0].memory_total_bytes, 80 * kMiB);
  EXPECT_EQ(merged[0].error_state, "GPU is lost");
}

TEST_F(SampleNvidiaSmiModeTest, AskedForTheHealthColumns) {
  NvidiaSmiSampler sampler(FakeNvidiaSmi());
  absl::StatusOr<std::vector<GpuUsage>> gpus = sampler.Sample();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(sampler.health_columns());
  EXPECT_EQ((*gpus)[0].ecc_uncorrected_volatile, -1);  // [N/A] on a GeForce.
  EXPECT_EQ((*gpus)[0].memory_total_bytes, 24576 * kMiB);
}

TEST_F(SampleNvidiaSmiModeTest, OldDriverFallsBackToTheBasicQuery) {
  setenv("FAKE_NVIDIA_SMI_MODE", "old", 1);
  NvidiaSmiSampler sampler(FakeNvidiaSmi());
  absl::StatusOr<std::vector<GpuUsage>> gpus = sampler.Sample();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_FALSE(sampler.health_columns());
  EXPECT_EQ((*gpus)[0].utilization_percent, 7);
  EXPECT_TRUE(sampler.Sample().ok());  // Straight to the basic query from now on.
}

TEST_F(SampleNvidiaSmiModeTest, ALostGpuFailsTheRunButNotTheSample) {
  setenv("FAKE_NVIDIA_SMI_CSV",
         absl::StrCat(WSCHED_SOURCE_DIR, "/tests/fixtures/gpu_health/h100-smi-unhealthy.csv").c_str(),
         1);
  setenv("FAKE_NVIDIA_SMI_EXIT", "15", 1);
  absl::StatusOr<std::vector<GpuUsage>> gpus = SampleNvidiaSmi(FakeNvidiaSmi());
  unsetenv("FAKE_NVIDIA_SMI_EXIT");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[5].pci_address, "0000:ab:00.0");
  EXPECT_THAT((*gpus)[5].error_state, HasSubstr("GPU is lost"));
}

}  // namespace
}  // namespace wsched::agent
