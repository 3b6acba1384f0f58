#include "server/core/mig_profiles.h"

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsNull;
using ::testing::NotNull;

std::vector<std::string> Names(const std::vector<MigProfile>* table) {
  std::vector<std::string> names;
  if (table == nullptr) return names;
  for (const MigProfile& p : *table) names.push_back(p.name);
  return names;
}

TEST(KnownMigProfiles, DriverNamesFindTheirTables) {
  EXPECT_THAT(
      Names(KnownMigProfiles("NVIDIA H100 80GB HBM3")),
      ElementsAre("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_THAT(
      Names(KnownMigProfiles("NVIDIA H200")),
      ElementsAre("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"));
  EXPECT_THAT(
      Names(KnownMigProfiles("NVIDIA A100-SXM4-40GB")),
      ElementsAre("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"));
  EXPECT_THAT(
      Names(KnownMigProfiles("NVIDIA A100 80GB PCIe")),
      ElementsAre("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
}

TEST(KnownMigProfiles, VariantsOfOneModelShareATable) {
  const std::vector<MigProfile>* h100 = KnownMigProfiles("NVIDIA H100 80GB HBM3");
  ASSERT_THAT(h100, NotNull());
  EXPECT_EQ(KnownMigProfiles("NVIDIA H100 PCIe"), h100);
  EXPECT_EQ(KnownMigProfiles("H100"), h100);
  EXPECT_EQ(KnownMigProfiles("h100_80gb"), h100);
  EXPECT_EQ(KnownMigProfiles("H100-SXM5-80GB"), h100);
  const std::vector<MigProfile>* h200 = KnownMigProfiles("NVIDIA H200");
  EXPECT_EQ(KnownMigProfiles("NVIDIA H200 NVL"), h200);
  EXPECT_EQ(KnownMigProfiles("H200-141GB"), h200);
  const std::vector<MigProfile>* a100_40 = KnownMigProfiles("NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(KnownMigProfiles("A100-PCIE-40GB"), a100_40);  // Older drivers drop "NVIDIA".
  EXPECT_EQ(KnownMigProfiles("NVIDIA A100-SXM4-80GB"), KnownMigProfiles("A100 80GB"));
  EXPECT_NE(KnownMigProfiles("A100-80GB"), a100_40);
}

TEST(KnownMigProfiles, NoTableWhereTheNameDoesNotSayWhich) {
  EXPECT_THAT(KnownMigProfiles("A100"), IsNull());  // 40GB or 80GB.
  EXPECT_THAT(KnownMigProfiles("NVIDIA H100 NVL"), IsNull());
  EXPECT_THAT(KnownMigProfiles("H100 94GB"), IsNull());
  EXPECT_THAT(KnownMigProfiles("NVIDIA GH200 480GB"), IsNull());
  EXPECT_THAT(KnownMigProfiles("NVIDIA L4"), IsNull());
  EXPECT_THAT(KnownMigProfiles("NVIDIA A30"), IsNull());
  EXPECT_THAT(KnownMigProfiles("pci-10de-2330"), IsNull());  // An unnamed GPU's stand-in.
  EXPECT_THAT(KnownMigProfiles(""), IsNull());
  EXPECT_THAT(KnownMigProfiles("NVIDIA"), IsNull());
}

// What placement relies on, for every built-in table: the IDs NVIDIA gives,
// placements inside the 8 slots, starts ascending, no name twice.
TEST(KnownMigProfiles, TablesAreWellFormed) {
  for (const char* model :
       {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    SCOPED_TRACE(model);
    const std::vector<MigProfile>* table = KnownMigProfiles(model);
    ASSERT_THAT(table, NotNull());
    std::vector<int> ids;
    std::set<std::string> names;
    for (const MigProfile& p : *table) {
      SCOPED_TRACE(p.name);
      ids.push_back(p.id);
      EXPECT_TRUE(names.insert(p.name).second);
      EXPECT_TRUE(absl::StartsWith(p.name, std::to_string(p.compute_slices) + "g."));
      EXPECT_GT(p.memory_bytes, 0);
      ASSERT_FALSE(p.starts.empty());
      for (size_t i = 0; i < p.starts.size(); ++i) {
        EXPECT_GE(p.starts[i], 0);
        EXPECT_LE(p.starts[i] + p.size, kMigMemorySlots);
        if (i > 0) {
          EXPECT_LT(p.starts[i - 1], p.starts[i]);
        }
      }
    }
    EXPECT_THAT(ids, ElementsAre(19, 20, 15, 14, 9, 5, 0));
  }
}

TEST(KnownMigProfiles, H100PlacementsAreNvidias) {
  const std::vector<MigProfile>& h100 = *KnownMigProfiles("H100");
  const MigProfile* one = FindProfile(h100, "1g.10gb");
  const MigProfile* one_double = FindProfile(h100, "1g.20gb");
  const MigProfile* three = FindProfile(h100, "3g.40gb");
  const MigProfile* four = FindProfile(h100, "4g.40gb");
  const MigProfile* seven = FindProfile(h100, "7g.80gb");
  ASSERT_TRUE(one && one_double && three && four && seven);
  EXPECT_THAT(one->starts, ElementsAre(0, 1, 2, 3, 4, 5, 6));
  EXPECT_EQ(one->size, 1);
  EXPECT_THAT(one_double->starts, ElementsAre(0, 2, 4, 6));
  EXPECT_EQ(one_double->size, 2);
  EXPECT_THAT(three->starts, ElementsAre(0, 4));
  EXPECT_EQ(three->size, 4);
  EXPECT_THAT(four->starts, ElementsAre(0));
  EXPECT_EQ(four->size, 4);
  EXPECT_EQ(seven->size, 8);
}

TEST(FindProfile, ByNameWithOrWithoutThePrefix) {
  const std::vector<MigProfile>& h200 = *KnownMigProfiles("H200");
  ASSERT_THAT(FindProfile(h200, "3g.71gb"), NotNull());
  EXPECT_EQ(FindProfile(h200, "3g.71gb")->id, 9);
  EXPECT_EQ(FindProfile(h200, "MIG 3g.71gb"), FindProfile(h200, "3g.71gb"));
  EXPECT_EQ(FindProfile(h200, "1G.18GB+ME")->id, 20);
  EXPECT_THAT(FindProfile(h200, "3g.40gb"), IsNull());
  EXPECT_THAT(FindProfile(h200, ""), IsNull());
  EXPECT_THAT(FindProfile({}, "3g.71gb"), IsNull());
}

}  // namespace
}  // namespace wsched::core
