#include "server/catalog/closest_name.h"

#include <vector>

#include "gtest/gtest.h"

namespace wsched::catalog {
namespace {

TEST(EditDistance, CountsSwapsAsOneEdit) {
  EXPECT_EQ(EditDistance("models", "models"), 0);
  EXPECT_EQ(EditDistance("modles", "models"), 1);
  EXPECT_EQ(EditDistance("memroy", "memory"), 1);
  EXPECT_EQ(EditDistance("gpu", "gpus"), 1);
  EXPECT_EQ(EditDistance("CPU", "cpu"), 0);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
}

TEST(ClosestName, SuggestsOnlyPlausibleTypos) {
  const std::vector<absl::string_view> keys = {"count", "models", "isolation"};
  EXPECT_EQ(ClosestName("modles", keys), "models");
  EXPECT_EQ(ClosestName("isolaton", keys), "isolation");
  EXPECT_EQ(ClosestName("colour", keys), std::nullopt);
  EXPECT_EQ(ClosestName("x", keys), std::nullopt);
  EXPECT_EQ(ClosestName("gpu", {"cpu", "memory", "gpus"}), "gpus");
}

}  // namespace
}  // namespace wsched::catalog
