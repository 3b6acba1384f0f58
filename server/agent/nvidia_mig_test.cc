#include "server/agent/nvidia_mig.h"

#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ReadTreeFile;

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

std::string H200(const std::string& file) { return ReadTreeFile("nvidia-smi/h200-mig/" + file); }

// ---- mode ----

TEST(MigModeCsvTest, H200Fixture) {
  absl::StatusOr<std::vector<MigModeLine>> modes = ParseMigModeCsv(H200("mig-mode.csv"));
  ASSERT_TRUE(modes.ok()) << modes.status();
  EXPECT_THAT(*modes, ElementsAre(MigModeLine{0, "0000:19:00.0", true, true, true},
                                  MigModeLine{1, "0000:3b:00.0", true, false, true},
                                  MigModeLine{2, "0000:9b:00.0", true, false, false},
                                  MigModeLine{3, "0000:bb:00.0", true, true, true}));
}

TEST(MigModeCsvTest, NotAvailableIsNoMigAndLostGpusAreSkipped) {
  absl::StatusOr<std::vector<MigModeLine>> modes = ParseMigModeCsv(
      "0, 00000000:01:00.0, [N/A], [N/A]\n"
      "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.  Reboot\n"
      "2, 00000000:03:00.0, [Unknown Error], [Unknown Error]\n");
  ASSERT_TRUE(modes.ok()) << modes.status();
  EXPECT_THAT(*modes, ElementsAre(MigModeLine{0, "0000:01:00.0", false, false, false},
                                  MigModeLine{2, "0000:03:00.0", false, false, false}));
}

struct BadText {
  const char* name;
  std::string text;
  const char* expected_message;
  friend void PrintTo(const BadText& bad, std::ostream* out) { *out << bad.name; }
};

class MigModeCsvRejectsTest : public ::testing::TestWithParam<BadText> {};

TEST_P(MigModeCsvRejectsTest, NamesTheLine) {
  absl::StatusOr<std::vector<MigModeLine>> modes = ParseMigModeCsv(GetParam().text);
  ASSERT_FALSE(modes.ok());
  EXPECT_THAT(modes.status().message(), HasSubstr(GetParam().expected_message));
}

INSTANTIATE_TEST_SUITE_P(
    Lines, MigModeCsvRejectsTest,
    ::testing::Values(
        BadText{"ThreeFields", "0, Enabled, Enabled\n", "line 1: expected 4 fields"},
        BadText{"UnknownMode", "0, 00000000:01:00.0, Enabled, Maybe\n",
                "MIG mode \"Maybe\" is not Enabled or Disabled"},
        BadText{"IndexTwice",
                "0, 00000000:01:00.0, Enabled, Enabled\n1, 00000000:02:00.0, Disabled, Disabled\n"
                "1, 00000000:03:00.0, Disabled, Disabled\n",
                "line 3: index \"1\" is not a new GPU index"},
        BadText{"NegativeIndex", "-1, 00000000:01:00.0, Enabled, Enabled\n", "index \"-1\""},
        BadText{"BusId", "0, 3B:00.0, Enabled, Enabled\n", "pci.bus_id \"3B:00.0\""}));

// ---- profiles ----

core::MigProfile Profile(std::string name, int id, int slices, int64_t memory, int size,
                         std::vector<int> starts) {
  return {.name = std::move(name),
          .id = id,
          .compute_slices = slices,
          .memory_bytes = memory,
          .size = size,
          .starts = std::move(starts)};
}

TEST(MigProfilesTest, H200ProfilesWithTheirPlacements) {
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> profiles =
      ParseMigProfiles(H200("mig-lgip.txt"), H200("mig-lgipp.txt"));
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  ASSERT_EQ(profiles->size(), 2u);  // Only the GPUs in MIG mode.
  const std::vector<core::MigProfile> h200 = {
      Profile("1g.18gb", 19, 1, 16 * kGiB, 1, {0, 1, 2, 3, 4, 5, 6}),
      Profile("1g.18gb+me", 20, 1, 16 * kGiB, 1, {0, 1, 2, 3, 4, 5, 6}),
      Profile("1g.35gb", 15, 1, 32 * kGiB + kGiB / 2, 2, {0, 2, 4, 6}),
      Profile("2g.35gb", 14, 2, 32 * kGiB + kGiB / 2, 2, {0, 2, 4}),
      Profile("3g.71gb", 9, 3, 69 * kGiB + 3 * kGiB / 4, 4, {0, 4}),
      Profile("4g.71gb", 5, 4, 69 * kGiB + 3 * kGiB / 4, 4, {0}),
      Profile("7g.141gb", 0, 7, 140 * kGiB, 8, {0})};
  EXPECT_EQ((*profiles)[0], h200);
  EXPECT_EQ((*profiles)[3], h200);
}

TEST(MigProfilesTest, H100TableAsTheUserGuidePrintsIt) {
  const char kLgip[] =
      R"(+-----------------------------------------------------------------------------+
| GPU instance profiles:                                                      |
| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |
|                              Free/Total   GiB              CE    JPEG  OFA  |
|=============================================================================|
|   0  MIG 1g.10gb       19     7/7        9.75       No     16     1     0   |
|                                                             1     1     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 1g.10gb+me    20     1/1        9.75       No     16     1     0   |
|                                                             1     1     1   |
+-----------------------------------------------------------------------------+
|   0  MIG 1g.20gb       15     4/4        19.62      No     26     1     0   |
|                                                             1     1     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 2g.20gb       14     3/3        19.62      No     32     2     0   |
|                                                             2     2     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 3g.40gb        9     2/2        39.50      No     60     3     0   |
|                                                             3     3     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 4g.40gb        5     1/1        39.50      No     64     4     0   |
|                                                             4     4     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 7g.80gb        0     1/1        79.25      No     132    7     0   |
|                                                             8     7     1   |
+-----------------------------------------------------------------------------+
)";
  const char kLgipp[] =
      "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1\n"
      "GPU  0 Profile ID 20 Placements: {0,1,2,3,4,5,6}:1\n"
      "GPU  0 Profile ID 15 Placements: {0,2,4,6}:2\n"
      "GPU  0 Profile ID 14 Placements: {0,2,4}:2\n"
      "GPU  0 Profile ID  9 Placements: {0,4}:4\n"
      "GPU  0 Profile ID  5 Placement : {0}:4\n"
      "GPU  0 Profile ID  0 Placement : {0}:8\n";
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> profiles =
      ParseMigProfiles(kLgip, kLgipp);
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  const std::vector<core::MigProfile>& gpu = (*profiles)[0];
  ASSERT_EQ(gpu.size(), 7u);
  EXPECT_EQ(gpu[0], Profile("1g.10gb", 19, 1, 9 * kGiB + 3 * kGiB / 4, 1, {0, 1, 2, 3, 4, 5, 6}));
  // 19.62 GiB: two decimals, exact to the byte nvidia-smi rounded them to.
  EXPECT_EQ(gpu[2], Profile("1g.20gb", 15, 1, 19 * kGiB + 62 * kGiB / 100, 2, {0, 2, 4, 6}));
  EXPECT_EQ(gpu[6], Profile("7g.80gb", 0, 7, 79 * kGiB + kGiB / 4, 8, {0}));
}

TEST(MigProfilesTest, NoMigEnabledDevicesIsNoProfiles) {
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> profiles =
      ParseMigProfiles("No MIG-enabled devices found.\n", "No MIG-enabled devices found.\n");
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  EXPECT_TRUE(profiles->empty());
}

TEST(MigProfilesTest, AProfileWithoutPlacementsFails) {
  std::string lgipp = H200("mig-lgipp.txt");
  lgipp.erase(lgipp.find("GPU  3 Profile ID 15"));
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> profiles =
      ParseMigProfiles(H200("mig-lgip.txt"), lgipp);
  ASSERT_FALSE(profiles.ok());
  EXPECT_THAT(profiles.status().message(),
              HasSubstr("no placements for profile 1g.35gb (ID 15) of GPU 3"));
}

const char kProfileHeader[] =
    "|=============================================================================|\n";

class MigProfileTableRejectsTest : public ::testing::TestWithParam<BadText> {};

TEST_P(MigProfileTableRejectsTest, NamesTheLine) {
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> profiles =
      ParseMigProfileTable(GetParam().text);
  ASSERT_FALSE(profiles.ok());
  EXPECT_THAT(profiles.status().message(), HasSubstr(GetParam().expected_message));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, MigProfileTableRejectsTest,
    ::testing::Values(
        BadText{
            "EightSlices",
            std::string(kProfileHeader) +
                "|   0  MIG 8g.18gb       19     7/7        16.00      No     16     1     0   |\n",
            "line 2: profile name \"8g.18gb\" is not like 1g.18gb"},
        BadText{
            "NoMemoryUnit",
            std::string(kProfileHeader) +
                "|   0  MIG 1g.18       19     7/7        16.00      No     16     1     0   |\n",
            "profile name \"1g.18\""},
        BadText{
            "Memory",
            std::string(kProfileHeader) +
                "|   0  MIG 1g.18gb       19     7/7        lots      No     16     1     0   |\n",
            "Memory \"lots\" is not GiB"},
        BadText{"Instances",
                std::string(kProfileHeader) + "|   0  MIG 1g.18gb       19     seven        16.00  "
                                              "    No     16     1     0   |\n",
                "Instances \"seven\" is not Free/Total"},
        BadText{
            "IdTwice",
            std::string(kProfileHeader) +
                "|   0  MIG 1g.18gb       19     7/7        16.00      No     16     1     0   |\n"
                "|   0  MIG 1g.35gb       19     4/4        32.50      No     16     1     0   |\n",
            "line 3: profile ID 19 twice on GPU 0"},
        BadText{"Truncated", std::string(kProfileHeader) + "|   0  MIG 1g.18gb   19  |\n",
                "expected GPU, Name, ID, Instances, Memory"},
        BadText{"NotARow", std::string(kProfileHeader) + "|   0  GPU 1g.18gb   19  |\n",
                "neither a profile row"}));

class MigPlacementsRejectsTest : public ::testing::TestWithParam<BadText> {};

TEST_P(MigPlacementsRejectsTest, NamesTheLine) {
  absl::StatusOr<std::map<int, std::map<int, MigPlacements>>> placements =
      ParseMigPlacements(GetParam().text);
  ASSERT_FALSE(placements.ok());
  EXPECT_THAT(placements.status().message(), HasSubstr(GetParam().expected_message));
}

INSTANTIATE_TEST_SUITE_P(
    Lines, MigPlacementsRejectsTest,
    ::testing::Values(
        BadText{"PastTheSlots", "GPU  0 Profile ID 15 Placements: {0,2,4,7}:2\n",
                "line 1: start \"7\" does not fit 2 of 8 slots"},
        BadText{"NotAscending", "GPU  0 Profile ID  9 Placements: {4,0}:4\n",
                "starts are not ascending"},
        BadText{"SizeZero", "GPU  0 Profile ID  9 Placements: {0}:0\n", "size after }"},
        BadText{"NoBraces", "GPU  0 Profile ID  9 Placements: 0,4:4\n", "expected {starts}:size"},
        BadText{"NoColon", "GPU  0 Profile ID  9 Placements {0,4}:4\n", "no ':' after Placements"},
        BadText{"NoProfile", "GPU  0 Profile 9 Placements: {0,4}:4\n",
                "expected GPU <n> Profile ID <id>"},
        BadText{"Junk", "GPU  0 Profile ID 9\n", "no \"Placements:\""},
        BadText{
            "Twice",
            "GPU  0 Profile ID  9 Placements: {0,4}:4\nGPU  0 Profile ID  9 Placements: {0}:4\n",
            "line 2: profile ID 9 twice on GPU 0"}));

// ---- GPU and compute instances ----

TEST(MigInstancesTest, H200FixtureRows) {
  absl::StatusOr<std::vector<MigGpuInstanceRow>> gis = ParseMigGpuInstances(H200("mig-lgi.txt"));
  ASSERT_TRUE(gis.ok()) << gis.status();
  ASSERT_EQ(gis->size(), 7u);
  EXPECT_EQ((*gis)[0],
            (MigGpuInstanceRow{
                .gpu = 0, .profile = "1g.18gb", .profile_id = 19, .id = 7, .start = 0, .size = 1}));
  EXPECT_EQ((*gis)[3],
            (MigGpuInstanceRow{
                .gpu = 0, .profile = "3g.71gb", .profile_id = 9, .id = 2, .start = 4, .size = 4}));
  absl::StatusOr<std::vector<MigComputeInstanceRow>> cis =
      ParseMigComputeInstances(H200("mig-lci.txt"));
  ASSERT_TRUE(cis.ok()) << cis.status();
  ASSERT_EQ(cis->size(), 7u);
  EXPECT_EQ((*cis)[6],
            (MigComputeInstanceRow{
                .gpu = 3, .gpu_instance = 1, .profile = "1c.3g.71gb", .profile_id = 0, .id = 1}));
}

TEST(MigInstancesTest, ComputeInstancesWithoutPlacementColumn) {
  // Drivers before the Placement column (the MIG user guide's example).
  absl::StatusOr<std::vector<MigComputeInstanceRow>> cis = ParseMigComputeInstances(
      "|   0      1       MIG 1c.3g.20gb       0         0     |\n"
      "|   0      1       MIG 1c.3g.20gb       0         1     |\n");
  ASSERT_TRUE(cis.ok()) << cis.status();
  EXPECT_EQ(cis->size(), 2u);
}

TEST(MigInstancesTest, NothingFoundIsNoRows) {
  EXPECT_TRUE(ParseMigGpuInstances("No GPU instances found: Not Found\n").value().empty());
  EXPECT_TRUE(ParseMigComputeInstances("No compute instances found: Not Found\n").value().empty());
}

core::MigInstance Slice(std::string profile, int gi, int ci, int start, int size) {
  return {.profile = std::move(profile),
          .gpu_instance = gi,
          .compute_instance = ci,
          .start = start,
          .size = size};
}

TEST(MigInstancesTest, PairsEachGpuInstanceWithTheComputeInstanceSpanningIt) {
  absl::StatusOr<std::map<int, std::vector<core::MigInstance>>> instances =
      PairMigInstances(ParseMigGpuInstances(H200("mig-lgi.txt")).value(),
                       ParseMigComputeInstances(H200("mig-lci.txt")).value());
  ASSERT_TRUE(instances.ok()) << instances.status();
  ASSERT_EQ(instances->size(), 2u);
  // Ordered by GPU instance ID: 3g + 2g + 1g + 1g.
  EXPECT_THAT((*instances)[0],
              ElementsAre(Slice("3g.71gb", 2, 0, 4, 4), Slice("2g.35gb", 4, 0, 2, 2),
                          Slice("1g.18gb", 7, 0, 0, 1), Slice("1g.18gb", 8, 0, 1, 1)));
  // Two compute instances (no single one spans GI 1) and none (GI 5): both
  // listed, so their slots show as taken, with compute_instance -1.
  EXPECT_THAT((*instances)[3],
              ElementsAre(Slice("3g.71gb", 1, -1, 0, 4), Slice("2g.35gb", 5, -1, 4, 2),
                          Slice("1g.18gb", 13, 0, 6, 1)));
}

TEST(MigInstancesTest, OnePartialComputeInstanceIsNotASlice) {
  absl::StatusOr<std::map<int, std::vector<core::MigInstance>>> instances = PairMigInstances(
      {{.gpu = 0, .profile = "3g.71gb", .profile_id = 9, .id = 1, .start = 0, .size = 4}},
      {{.gpu = 0, .gpu_instance = 1, .profile = "2c.3g.71gb", .profile_id = 1, .id = 0}});
  ASSERT_TRUE(instances.ok()) << instances.status();
  EXPECT_THAT((*instances)[0], ElementsAre(Slice("3g.71gb", 1, -1, 0, 4)));
}

TEST(MigInstancesTest, ContradictionsFail) {
  const MigGpuInstanceRow gi2{
      .gpu = 0, .profile = "3g.71gb", .profile_id = 9, .id = 2, .start = 4, .size = 4};
  const MigGpuInstanceRow gi7{
      .gpu = 0, .profile = "1g.18gb", .profile_id = 19, .id = 7, .start = 0, .size = 1};
  MigGpuInstanceRow overlapping = gi7;
  overlapping.id = 9;
  overlapping.start = 5;
  EXPECT_THAT(PairMigInstances({gi2, overlapping}, {}).status().message(),
              HasSubstr("GPU instance 9 of GPU 0 at 5:1 overlaps another"));
  MigGpuInstanceRow same_id = gi7;
  same_id.start = 1;
  EXPECT_THAT(PairMigInstances({gi7, same_id}, {}).status().message(),
              HasSubstr("GPU instance 7 twice on GPU 0"));
  const MigComputeInstanceRow orphan{.gpu = 0, .gpu_instance = 3, .profile = "1g.18gb", .id = 0};
  EXPECT_THAT(PairMigInstances({gi2, gi7}, {orphan}).status().message(),
              HasSubstr("compute instance 0 of GPU instance 3 on GPU 0, which -lgi does not list"));
  const MigComputeInstanceRow ci{.gpu = 0, .gpu_instance = 7, .profile = "1g.18gb", .id = 0};
  EXPECT_THAT(PairMigInstances({gi7}, {ci, ci}).status().message(),
              HasSubstr("compute instance 0 twice in GPU instance 7 on GPU 0"));
  // The same IDs on another GPU are another instance.
  MigGpuInstanceRow other_gpu = gi7;
  other_gpu.gpu = 1;
  EXPECT_TRUE(PairMigInstances({gi7, other_gpu}, {}).ok());
}

class MigGpuInstancesRejectsTest : public ::testing::TestWithParam<BadText> {};

TEST_P(MigGpuInstancesRejectsTest, NamesTheLine) {
  absl::StatusOr<std::vector<MigGpuInstanceRow>> rows = ParseMigGpuInstances(GetParam().text);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr(GetParam().expected_message));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, MigGpuInstancesRejectsTest,
    ::testing::Values(
        BadText{"PlacementPastTheSlots", "|   0  MIG 3g.71gb       9        2          6:4     |\n",
                "line 1: placement \"6:4\" is not Start:Size within 8 slots"},
        BadText{"PlacementNotANumber", "|   0  MIG 3g.71gb       9        2          four     |\n",
                "placement \"four\""},
        BadText{"Name", "|   0  MIG big       9        2          0:4     |\n",
                "profile name \"big\""},
        BadText{"InstanceId", "|   0  MIG 3g.71gb       9        x          0:4     |\n",
                "profile or instance ID is not a number"},
        BadText{"NoMig", "|   0  3g.71gb       9        2          0:4     |\n",
                "expected GPU, MIG <name>"}));

TEST(MigInstancesTest, ComputeInstanceRowErrorsNameTheLine) {
  EXPECT_THAT(ParseMigComputeInstances("\n|   0      1       MIG 3g       2     0     |\n")
                  .status()
                  .message(),
              HasSubstr("line 2: profile name \"3g\""));
  EXPECT_THAT(
      ParseMigComputeInstances("|   0      x       MIG 3g.71gb  2   0  |\n").status().message(),
      HasSubstr("GPU or GPU instance ID is not a number"));
  EXPECT_THAT(ParseMigComputeInstances("|   0   MIG 3g.71gb  2   0  |\n").status().message(),
              HasSubstr("expected GPU, GPU Instance ID, MIG <name>"));
}

// ---- UUIDs ----

TEST(MigDeviceListTest, H200Fixture) {
  absl::StatusOr<std::vector<MigDeviceUuid>> devices = ParseMigDeviceList(H200("list.txt"));
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 7u);
  EXPECT_EQ((*devices)[0], (MigDeviceUuid{.gpu = 0,
                                          .device = 0,
                                          .profile = "3g.71gb",
                                          .uuid = "MIG-5b1e0c7a-93d2-5f4e-8a61-c2d7e9f04b13"}));
  EXPECT_EQ((*devices)[4], (MigDeviceUuid{.gpu = 3,
                                          .device = 0,
                                          .profile = "1c.3g.71gb",
                                          .uuid = "MIG-9d27f4c1-0b6e-5a83-84f5-e1c3a7d60b92"}));
}

TEST(MigDeviceListTest, OlderUuidsAndLostGpus) {
  // R450 named MIG devices by GPU UUID and GI/CI.
  absl::StatusOr<std::vector<MigDeviceUuid>> devices = ParseMigDeviceList(
      "GPU 0: A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n"
      "  MIG 1g.5gb Device 0: (UUID: MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/7/0)\n"
      "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.\n");
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].uuid, "MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/7/0");
}

class MigDeviceListRejectsTest : public ::testing::TestWithParam<BadText> {};

TEST_P(MigDeviceListRejectsTest, NamesTheLine) {
  absl::StatusOr<std::vector<MigDeviceUuid>> devices = ParseMigDeviceList(GetParam().text);
  ASSERT_FALSE(devices.ok());
  EXPECT_THAT(devices.status().message(), HasSubstr(GetParam().expected_message));
}

const char kGpuLine[] = "GPU 0: NVIDIA H200 (UUID: GPU-2c6f1a3e-91d4-4b7a-a0e2-5f83c1d9b417)\n";

INSTANTIATE_TEST_SUITE_P(
    Lines, MigDeviceListRejectsTest,
    ::testing::Values(
        BadText{"MigBeforeGpu", "  MIG 1g.18gb Device  0: (UUID: MIG-a)\n",
                "line 1: MIG device before any GPU line"},
        BadText{"NotMigUuid", std::string(kGpuLine) + "  MIG 1g.18gb Device  0: (UUID: GPU-a)\n",
                "line 2: UUID \"GPU-a\" is not MIG-..."},
        BadText{"NoUuid", std::string(kGpuLine) + "  MIG 1g.18gb Device  0:\n",
                "no (UUID: MIG-...)"},
        BadText{"DeviceIndex",
                std::string(kGpuLine) + "  MIG 1g.18gb Device  zero: (UUID: MIG-a)\n",
                "device index is not a number"},
        BadText{"Profile", std::string(kGpuLine) + "  MIG huge Device  0: (UUID: MIG-a)\n",
                "profile \"huge\""},
        BadText{"GpuIndex", "GPU x: NVIDIA H200 (UUID: GPU-a)\n", "expected GPU <index>:"},
        BadText{"Junk", std::string(kGpuLine) + "Driver Version: 550.54.15\n",
                "line 2: neither a GPU nor a MIG device line"}));

TEST(MigDeviceQueryTest, H200FixtureAndProcessesAreNotDevices) {
  absl::StatusOr<std::vector<MigDeviceIds>> devices = ParseMigDeviceQuery(H200("query.txt"));
  ASSERT_TRUE(devices.ok()) << devices.status();
  // GPU 0's processes section names GI 7 and CI 0 too: not a device.
  EXPECT_THAT(
      *devices,
      ElementsAre(MigDeviceIds{"0000:19:00.0", 0, 2, 0}, MigDeviceIds{"0000:19:00.0", 1, 4, 0},
                  MigDeviceIds{"0000:19:00.0", 2, 8, 0}, MigDeviceIds{"0000:19:00.0", 3, 7, 0},
                  MigDeviceIds{"0000:bb:00.0", 0, 1, 0}, MigDeviceIds{"0000:bb:00.0", 1, 1, 1},
                  MigDeviceIds{"0000:bb:00.0", 2, 13, 0}));
}

TEST(MigDeviceQueryTest, IncompleteOrBrokenBlocksFail) {
  EXPECT_THAT(ParseMigDeviceQuery("GPU 00000000:19:00.0\n"
                                  "    MIG Devices\n"
                                  "        MIG Device\n"
                                  "            Index                         : 0\n"
                                  "            GPU Instance ID               : 2\n"
                                  "    Minor Number                          : 0\n")
                  .status()
                  .message(),
              HasSubstr("line 3: a MIG Device without Index, GPU Instance ID and Compute"));
  EXPECT_THAT(ParseMigDeviceQuery("GPU 00000000:19:00.0\n"
                                  "        MIG Device\n"
                                  "            Index                         : first\n")
                  .status()
                  .message(),
              HasSubstr("line 3: not a number"));
  EXPECT_THAT(ParseMigDeviceQuery("        MIG Device\n").status().message(),
              HasSubstr("line 1: MIG Device before any GPU section"));
  EXPECT_THAT(ParseMigDeviceQuery("GPU 19:00.0\n").status().message(),
              HasSubstr("line 1: pci.bus_id \"19:00.0\""));
}

// ---- capability files ----

TEST(MigCapabilityTest, PathsUseTheDeviceMinor) {
  EXPECT_EQ(MigCapabilityPath(3, 7), "/proc/driver/nvidia/capabilities/gpu3/mig/gi7/access");
  EXPECT_EQ(MigCapabilityPath(3, 7, 0), "/proc/driver/nvidia/capabilities/gpu3/mig/gi7/ci0/access");
}

TEST(MigCapabilityTest, MinorAndDeviceNode) {
  absl::StatusOr<int64_t> minor =
      ParseCapabilityMinor("DeviceFileMinor: 67\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
  ASSERT_TRUE(minor.ok()) << minor.status();
  EXPECT_EQ(*minor, 67);
  EXPECT_EQ(CapabilityDeviceNode(509, 67),
            (core::DeviceNode{
                .path = "/dev/nvidia-caps/nvidia-cap67", .type = 'c', .major = 509, .minor = 67}));
  EXPECT_THAT(ParseCapabilityMinor("DeviceFileMode: 292\n").status().message(),
              HasSubstr("no DeviceFileMinor line"));
  EXPECT_THAT(ParseCapabilityMinor("DeviceFileMinor: -1\n").status().message(),
              HasSubstr("DeviceFileMinor \"-1\" is not a device minor"));
  EXPECT_FALSE(ParseCapabilityMinor("DeviceFileMinor: 1048576\n").ok());  // Past 20 bits.
}

TEST(MigCapabilityTest, UsableSliceNeedsItsComputeInstanceAndBothNodes) {
  core::MigInstance slice = Slice("1g.18gb", 7, 0, 0, 1);
  EXPECT_FALSE(IsUsableSlice(slice));
  slice.gi_access = CapabilityDeviceNode(509, 66);
  EXPECT_FALSE(IsUsableSlice(slice));
  slice.ci_access = CapabilityDeviceNode(509, 67);
  EXPECT_TRUE(IsUsableSlice(slice));
  slice.compute_instance = -1;
  EXPECT_FALSE(IsUsableSlice(slice));
}

}  // namespace
}  // namespace wsched::agent
