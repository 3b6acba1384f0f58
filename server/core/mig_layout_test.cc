#include "server/core/mig_layout.h"

#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/mig_profiles.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<MigProfile>& H200() { return *KnownMigProfiles("H200"); }

std::vector<int> Starts(const MigLayoutPlan& plan) {
  std::vector<int> starts;
  for (const MigLayoutSlice& slice : plan.slices) starts.push_back(slice.start);
  return starts;
}

TEST(MigSlotsTaken, TheSlotsOfThePlacementAndSlotSevenBesideA4g) {
  EXPECT_EQ(MigSlotsTaken(1, 6, 1), 0b0100'0000);
  EXPECT_EQ(MigSlotsTaken(3, 4, 4), 0b1111'0000);
  EXPECT_EQ(MigSlotsTaken(4, 0, 4), 0b1000'1111);
  EXPECT_EQ(MigSlotsTaken(7, 0, 8), 0xFF);
  EXPECT_EQ(MigSlotsTaken(1, 7, 4), 0b1000'0000) << "clipped to the 8 slots";
  EXPECT_EQ(MigSlotsTaken(1, -2, 3), 0b0000'0001);
  EXPECT_EQ(MigSlotsTaken(1, 2147483647, 2147483647), 0);
  EXPECT_EQ(MigSlotsTaken(1, 0, 0), 0);
}

TEST(LayOutMig, EachProfileAtItsLowestStartWhereThatFits) {
  MigLayoutPlan plan = LayOutMig(H200(), {"4g.71gb", "2g.35gb", "1g.18gb"});
  ASSERT_TRUE(plan.legal()) << plan.misfit->reason;
  EXPECT_THAT(plan.slices, ElementsAre(MigLayoutSlice{"4g.71gb", 0}, MigLayoutSlice{"2g.35gb", 4},
                                       MigLayoutSlice{"1g.18gb", 6}));

  plan = LayOutMig(H200(), std::vector<std::string>(7, "1g.18gb"));
  ASSERT_TRUE(plan.legal());
  EXPECT_THAT(Starts(plan), ElementsAre(0, 1, 2, 3, 4, 5, 6));

  plan = LayOutMig(H200(), {"1g.35gb", "1g.35gb", "1g.35gb", "1g.35gb"});
  ASSERT_TRUE(plan.legal());
  EXPECT_THAT(Starts(plan), ElementsAre(0, 2, 4, 6));

  plan = LayOutMig(H200(), {"7g.141gb"});
  ASSERT_TRUE(plan.legal());
  EXPECT_THAT(Starts(plan), ElementsAre(0));
}

TEST(LayOutMig, AnEarlierProfileMovesUpWhenItsLowestStartWouldShutOutALaterOne) {
  // NVIDIA's balanced layout: the 3g at 0 would leave slot 7 to the second
  // 1g, which no 1g can start at.
  MigLayoutPlan plan = LayOutMig(H200(), {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"});
  ASSERT_TRUE(plan.legal()) << plan.misfit->reason;
  EXPECT_THAT(plan.slices, ElementsAre(MigLayoutSlice{"3g.71gb", 4}, MigLayoutSlice{"2g.35gb", 0},
                                       MigLayoutSlice{"1g.18gb", 2}, MigLayoutSlice{"1g.18gb", 3}));
}

TEST(LayOutMig, NamesAreReadAsTheTableSpellsThem) {
  MigLayoutPlan plan = LayOutMig(H200(), {"MIG 3G.71GB", "3g.71gb"});
  ASSERT_TRUE(plan.legal());
  EXPECT_THAT(plan.slices, ElementsAre(MigLayoutSlice{"3g.71gb", 0}, MigLayoutSlice{"3g.71gb", 4}));
}

TEST(LayOutMig, TheFirstProfileThatFitsInNoArrangementIsTheMisfit) {
  MigLayoutPlan plan = LayOutMig(H200(), std::vector<std::string>(8, "1g.18gb"));
  ASSERT_FALSE(plan.legal());
  EXPECT_EQ(plan.misfit->index, 7u);
  EXPECT_THAT(plan.slices, IsEmpty());
  EXPECT_THAT(plan.misfit->reason, HasSubstr("brings the compute slices to 8; a GPU has 7"));

  plan = LayOutMig(H200(), {"3g.71gb", "1g.35gb", "1g.35gb", "1g.35gb"});
  ASSERT_FALSE(plan.legal());
  EXPECT_EQ(plan.misfit->index, 3u);
  EXPECT_EQ(plan.misfit->reason,
            "no legal start is left for 1g.35gb beside the 3 profiles before it, however they are "
            "arranged (1g.35gb takes 2 slots at starts 0, 2, 4, 6; the ones before it take 8 of "
            "the 8 memory slots)");

  // The 4g also takes slot 7, so no 1g.35gb fits at 6 beside it.
  plan = LayOutMig(H200(), {"4g.71gb", "1g.35gb", "1g.35gb"});
  ASSERT_FALSE(plan.legal());
  EXPECT_EQ(plan.misfit->index, 2u);
  EXPECT_EQ(plan.misfit->reason,
            "no legal start is left for 1g.35gb beside the 2 profiles before it, however they are "
            "arranged (1g.35gb takes 2 slots at starts 0, 2, 4, 6; the ones before it take 7 of "
            "the 8 memory slots)");
}

TEST(LayOutMig, A4gAndA3gNeverShareAGpu) {
  for (const auto& layout : {std::vector<std::string>{"4g.71gb", "3g.71gb"},
                             std::vector<std::string>{"3g.71gb", "4g.71gb"}}) {
    MigLayoutPlan plan = LayOutMig(H200(), layout);
    ASSERT_FALSE(plan.legal()) << layout[0];
    EXPECT_EQ(plan.misfit->index, 1u);
    EXPECT_THAT(plan.misfit->reason,
                HasSubstr("NVIDIA's valid MIG combinations never pair a 4g with a 3g"));
  }
}

TEST(LayOutMig, OneProfileWithAllMediaEnginesPerGpu) {
  ASSERT_TRUE(LayOutMig(H200(), {"1g.18gb+me", "1g.18gb", "1g.18gb"}).legal());
  MigLayoutPlan plan = LayOutMig(H200(), {"1g.18gb+me", "1g.18gb", "1g.18gb+me"});
  ASSERT_FALSE(plan.legal());
  EXPECT_EQ(plan.misfit->index, 2u);
  EXPECT_EQ(plan.misfit->reason,
            "1g.18gb+me takes all of the GPU's media engines, as 1g.18gb+me before it does: one "
            "per GPU");
}

TEST(LayOutMig, AProfileTheTableLacksIsTheMisfit) {
  MigLayoutPlan plan = LayOutMig(H200(), {"1g.18gb", "1g.20gb"});
  ASSERT_FALSE(plan.legal());
  EXPECT_EQ(plan.misfit->index, 1u);
  EXPECT_EQ(plan.misfit->reason, "1g.20gb is not a profile of this GPU's table");
}

TEST(LayOutMig, AnEmptyLayoutIsLegalAndHoldsNothing) {
  MigLayoutPlan plan = LayOutMig(H200(), {});
  EXPECT_TRUE(plan.legal());
  EXPECT_THAT(plan.slices, IsEmpty());
}

// Every layout of up to 4 H200 profiles: legal exactly when some assignment
// of legal starts (tried here by brute force over all of them) holds it,
// and the starts chosen are legal and overlap nowhere.
TEST(LayOutMig, AgreesWithTryingEveryArrangement) {
  std::vector<std::string> names;
  for (const MigProfile& p : H200()) names.push_back(p.name);
  const auto brute_force_fits = [](const std::vector<const MigProfile*>& layout) {
    std::function<bool(size_t, MigSlotMask, int)> fits = [&](size_t i, MigSlotMask used,
                                                             int media) -> bool {
      if (i == layout.size()) return true;
      const MigProfile& p = *layout[i];
      const int me = p.name.find("+me") != std::string::npos ? 1 : 0;
      if (me + media > 1) return false;
      for (int start : p.starts) {
        if (start + p.size > kMigMemorySlots) continue;
        const MigSlotMask taken = MigSlotsTaken(p.compute_slices, start, p.size);
        if ((taken & used) == 0 && fits(i + 1, used | taken, media + me)) return true;
      }
      return false;
    };
    return fits(0, 0, 0);
  };
  int legal = 0;
  int tried = 0;
  std::function<void(std::vector<std::string>&)> each = [&](std::vector<std::string>& layout) {
    if (!layout.empty()) {
      ++tried;
      std::vector<const MigProfile*> profiles;
      for (const std::string& name : layout) profiles.push_back(FindProfile(H200(), name));
      const MigLayoutPlan plan = LayOutMig(H200(), layout);
      ASSERT_EQ(plan.legal(), brute_force_fits(profiles)) << ::testing::PrintToString(layout);
      if (plan.legal()) {
        ++legal;
        MigSlotMask used = 0;
        for (size_t i = 0; i < plan.slices.size(); ++i) {
          const MigProfile& p = *profiles[i];
          ASSERT_THAT(p.starts, ::testing::Contains(plan.slices[i].start));
          const MigSlotMask taken = MigSlotsTaken(p.compute_slices, plan.slices[i].start, p.size);
          ASSERT_EQ(taken & used, 0) << ::testing::PrintToString(layout);
          used |= taken;
        }
      }
    }
    if (layout.size() == 4) return;
    for (const std::string& name : names) {
      layout.push_back(name);
      each(layout);
      layout.pop_back();
    }
  };
  std::vector<std::string> layout;
  each(layout);
  EXPECT_EQ(tried, 7 + 49 + 343 + 2401);
  EXPECT_GT(legal, 0);
  EXPECT_LT(legal, tried);
}

}  // namespace
}  // namespace wsched::core
