#include "server/agent/mig_relayout.h"

#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/nvidia_mig.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using ::testing::ElementsAre;
using testing::FakeNvidiaSmi;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ReadTreeFile;
using testing::ScratchDir;
using testing::Tree;

using Args = std::vector<std::string>;

// GPU 0 of the H200 fixtures.
constexpr char kGpu0Address[] = "0000:19:00.0";
constexpr char kGpu0Uuid[] = "GPU-2c6f1a3e-91d4-4b7a-a0e2-5f83c1d9b417";

// The H200's table as the fixture's mig -lgip and -lgipp give it.
std::vector<core::MigProfile> H200Table() {
  auto profiles = ParseMigProfiles(ReadTreeFile("nvidia-smi/h200-mig/mig-lgip.txt"),
                                   ReadTreeFile("nvidia-smi/h200-mig/mig-lgipp.txt"));
  EXPECT_TRUE(profiles.ok()) << profiles.status();
  return profiles.ok() ? (*profiles)[0] : std::vector<core::MigProfile>{};
}

core::GpuMig SevenSmallSlices() {
  core::GpuMig mig{.enabled = true, .pending_enabled = true, .profiles = H200Table()};
  for (int start = 0; start < 7; ++start) {
    mig.instances.push_back({.profile = "1g.18gb",
                             .gpu_instance = 7 + start,
                             .compute_instance = 0,
                             .start = start,
                             .size = 1});
  }
  return mig;
}

// 3g.71gb + 2g.35gb + 1g.18gb + 1g.18gb, in no particular order.
const std::vector<WantedSlice> kMixed = {
    {"3g.71gb", 4}, {"1g.18gb", 1}, {"2g.35gb", 2}, {"1g.18gb", 0}};

TEST(MigRelayoutPlanTest, SevenSmallToMixedDestroysThenCreatesByStart) {
  auto plan = PlanRelayout(0, SevenSmallSlices(), kMixed);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(*plan, ElementsAre(Args{"mig", "-i", "0", "-dci"}, Args{"mig", "-i", "0", "-dgi"},
                                 Args{"mig", "-i", "0", "-cgi", "19:0", "-C"},
                                 Args{"mig", "-i", "0", "-cgi", "19:1", "-C"},
                                 Args{"mig", "-i", "0", "-cgi", "14:2", "-C"},
                                 Args{"mig", "-i", "0", "-cgi", "9:4", "-C"}));
}

TEST(MigRelayoutPlanTest, EmptyGpuOnlyCreatesAndIndexIsTheGiven) {
  core::GpuMig empty{.enabled = true, .pending_enabled = true, .profiles = H200Table()};
  auto plan = PlanRelayout(3, empty, {{"MIG 7g.141gb", 0}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(*plan, ElementsAre(Args{"mig", "-i", "3", "-cgi", "0:0", "-C"}));
}

TEST(MigRelayoutPlanTest, MatchingLayoutPlansNothing) {
  std::vector<WantedSlice> same;
  for (int start = 6; start >= 0; --start) same.push_back({"1g.18gb", start});
  auto plan = PlanRelayout(0, SevenSmallSlices(), same);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(*plan, IsEmpty());
}

TEST(MigRelayoutPlanTest, MatchingLayoutWithUnusableSliceIsLaidOutAgain) {
  core::GpuMig mig = SevenSmallSlices();
  mig.instances[3].compute_instance = -1;
  std::vector<WantedSlice> same;
  for (int start = 0; start < 7; ++start) same.push_back({"1g.18gb", start});
  auto plan = PlanRelayout(0, mig, same);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->size(), 9u);
  EXPECT_EQ(plan->front(), (Args{"mig", "-i", "0", "-dci"}));
}

TEST(MigRelayoutPlanTest, IllegalStartNamesFieldAndLegalStarts) {
  auto plan = PlanRelayout(0, SevenSmallSlices(), {{"1g.18gb", 0}, {"3g.71gb", 2}});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("layout[1].start: 2 is not a start of 3g.71gb"));
  EXPECT_THAT(plan.status().message(), HasSubstr("0, 4"));
}

TEST(MigRelayoutPlanTest, SlotSevenIsNoStartForOneG) {
  auto plan = PlanRelayout(0, SevenSmallSlices(), {{"1g.18gb", 7}});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("layout[0].start: 7"));
}

TEST(MigRelayoutPlanTest, OverlapNamesBothSlices) {
  auto plan = PlanRelayout(0, SevenSmallSlices(), {{"3g.71gb", 4}, {"2g.35gb", 4}});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("layout[1]: 2g.35gb@4 overlaps layout[0] 3g.71gb@4"));
}

TEST(MigRelayoutPlanTest, UnknownProfileNamesField) {
  auto plan = PlanRelayout(0, SevenSmallSlices(), {{"1g.18gb", 0}, {"3g.40gb", 4}});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("layout[1].profile: \"3g.40gb\" is not a profile of this GPU"));
}

TEST(MigRelayoutPlanTest, NoProfileTableIsRefused) {
  core::GpuMig mig = SevenSmallSlices();
  mig.profiles.clear();
  auto plan = PlanRelayout(0, mig, kMixed);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("profiles:"));
}

TEST(MigRelayoutPlanTest, MigOffOrPendingIsRefused) {
  core::GpuMig off{.profiles = H200Table()};
  EXPECT_EQ(PlanRelayout(0, off, kMixed).status().code(), absl::StatusCode::kFailedPrecondition);
  core::GpuMig enabling = off;
  enabling.pending_enabled = true;
  EXPECT_THAT(PlanRelayout(0, enabling, kMixed).status().message(),
              HasSubstr("until the GPU is reset"));
  core::GpuMig disabling = SevenSmallSlices();
  disabling.pending_enabled = false;
  auto plan = PlanRelayout(0, disabling, kMixed);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(plan.status().message(), HasSubstr("pending a change to disabled"));
}

TEST(MigRelayoutPlanTest, ComputeSlicesOverSevenAreRefused) {
  // A table that lets 4g.71gb start at 4 too: two fit in the 8 slots, not
  // in the 7 compute slices.
  core::GpuMig mig = SevenSmallSlices();
  for (core::MigProfile& profile : mig.profiles) {
    if (profile.name == "4g.71gb") profile.starts = {0, 4};
  }
  auto plan = PlanRelayout(0, mig, {{"4g.71gb", 0}, {"4g.71gb", 4}});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("8 compute slices, a GPU has 7"));
}

TEST(MigRelayoutPlanTest, NegativeGpuIsRefused) {
  EXPECT_THAT(PlanRelayout(-1, SevenSmallSlices(), kMixed).status().message(), HasSubstr("gpu:"));
}

// The runner against the fake nvidia-smi: GPU 0 of h200-relayout starts as
// seven 1g.18gb; after a -cgi the fake answers from h200-mig, where GPU 0 is
// 1g.18gb@0, 1g.18gb@1, 2g.35gb@2, 3g.71gb@4.
class MigRelayoutRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    calls_ = (scratch_.path() / "calls.txt").string();
    setenv("FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/h200-relayout").c_str(), 1);
    setenv("FAKE_NVIDIA_SMI_AFTER_DIR", Tree("nvidia-smi/h200-mig").c_str(), 1);
    setenv("FAKE_NVIDIA_SMI_CALLS", calls_.c_str(), 1);
  }
  void TearDown() override {
    for (const char* name :
         {"FAKE_NVIDIA_SMI_DIR", "FAKE_NVIDIA_SMI_AFTER_DIR", "FAKE_NVIDIA_SMI_CALLS",
          "FAKE_NVIDIA_SMI_APPS", "FAKE_NVIDIA_SMI_FAIL"}) {
      unsetenv(name);
    }
  }
  static absl::Status Run(const std::vector<WantedSlice>& wanted) {
    return RelayoutGpu(
        {.nvidia_smi = FakeNvidiaSmi(), .pci_address = kGpu0Address, .uuid = kGpu0Uuid}, wanted,
        absl::Seconds(10));
  }
  // The calls that change the GPU, in order.
  std::vector<std::string> Changes() const {
    std::vector<std::string> changes;
    std::ifstream in(calls_);
    for (std::string line; std::getline(in, line);) {
      if (absl::StartsWith(line, "mig -i ")) changes.push_back(line);
    }
    return changes;
  }

  ScratchDir scratch_;
  std::string calls_;
};

TEST_F(MigRelayoutRunTest, LaysOutAndChecks) {
  absl::Status status = Run(kMixed);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_THAT(Changes(), ElementsAre("mig -i 0 -dci", "mig -i 0 -dgi", "mig -i 0 -cgi 19:0 -C",
                                     "mig -i 0 -cgi 19:1 -C", "mig -i 0 -cgi 14:2 -C",
                                     "mig -i 0 -cgi 9:4 -C"));
}

TEST_F(MigRelayoutRunTest, AlreadyLaidOutRunsNothing) {
  setenv("FAKE_NVIDIA_SMI_DIR", Tree("nvidia-smi/h200-mig").c_str(), 1);
  absl::Status status = Run(kMixed);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_THAT(Changes(), IsEmpty());
}

TEST_F(MigRelayoutRunTest, RefusesGpuWithComputeProcess) {
  setenv("FAKE_NVIDIA_SMI_APPS", Tree("nvidia-smi/compute-apps/h200-gpu0-busy.csv").c_str(), 1);
  absl::Status status = Run(kMixed);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("pid 48211"));
  EXPECT_THAT(status.message(), HasSubstr("only a GPU that holds nothing"));
  EXPECT_THAT(Changes(), IsEmpty());
}

TEST_F(MigRelayoutRunTest, ProcessesOnAnotherGpuDoNotStopIt) {
  setenv("FAKE_NVIDIA_SMI_APPS", Tree("nvidia-smi/compute-apps/h200-gpu3-busy.csv").c_str(), 1);
  absl::Status status = Run(kMixed);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(Changes().size(), 6u);
}

TEST_F(MigRelayoutRunTest, StopsAtFirstFailingCommand) {
  setenv("FAKE_NVIDIA_SMI_FAIL", "mig -i 0 -cgi 14:2 -C", 1);
  absl::Status status = Run(kMixed);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("mig -i 0 -cgi 14:2 -C failed with exit status 4: "
                                          "Failed to get mig -i 0 -cgi 14:2 -C: Insufficient "
                                          "Permissions"));
  EXPECT_THAT(status.message(), HasSubstr("command 5 of 6; the GPU is left part way"));
  EXPECT_THAT(Changes(), ElementsAre("mig -i 0 -dci", "mig -i 0 -dgi", "mig -i 0 -cgi 19:0 -C",
                                     "mig -i 0 -cgi 19:1 -C", "mig -i 0 -cgi 14:2 -C"));
}

TEST_F(MigRelayoutRunTest, FailingFirstCommandChangedNothing) {
  setenv("FAKE_NVIDIA_SMI_FAIL", "mig -i 0 -dci", 1);
  absl::Status status = Run(kMixed);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("command 1 of 6; nothing was changed"));
  EXPECT_THAT(Changes(), ElementsAre("mig -i 0 -dci"));
}

TEST_F(MigRelayoutRunTest, ReportsWhatDiffersAfterwards) {
  // The GPU still shows seven 1g.18gb after the commands.
  unsetenv("FAKE_NVIDIA_SMI_AFTER_DIR");
  absl::Status status = Run(kMixed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("missing 2g.35gb@2, 3g.71gb@4"));
  EXPECT_THAT(status.message(),
              HasSubstr("unexpected 1g.18gb@2, 1g.18gb@3, 1g.18gb@4, 1g.18gb@5, 1g.18gb@6"));
  EXPECT_EQ(Changes().size(), 6u);
}

TEST_F(MigRelayoutRunTest, InvalidLayoutChangesNothing) {
  absl::Status status = Run({{"3g.71gb", 2}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Changes(), IsEmpty());
}

TEST_F(MigRelayoutRunTest, UnknownGpuIsNotFound) {
  absl::Status status =
      RelayoutGpu({.nvidia_smi = FakeNvidiaSmi(), .pci_address = "0000:aa:00.0", .uuid = kGpu0Uuid},
                  kMixed, absl::Seconds(10));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Changes(), IsEmpty());
}

}  // namespace
}  // namespace wsched::agent
