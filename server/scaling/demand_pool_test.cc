#include "server/scaling/demand_pool.h"

#include <set>

#include "gtest/gtest.h"

namespace wsched::scaling {
namespace {

TEST(DemandPoolTest, PreferredPoolWhileItCanGrow) {
  EXPECT_EQ(DemandPool({"gpu-h100", "gpu-a100"}, [](const std::string&) { return true; }),
            "gpu-h100");
}

TEST(DemandPoolTest, FallbackWhenThePreferredCannotGrow) {
  std::set<std::string> stuck = {"gpu-h100"};
  EXPECT_EQ(DemandPool({"gpu-h100", "gpu-a100"},
                       [&](const std::string& pool) { return !stuck.contains(pool); }),
            "gpu-a100");
}

TEST(DemandPoolTest, PreferredWhenNoneCanGrow) {
  EXPECT_EQ(DemandPool({"gpu-h100", "gpu-a100"}, [](const std::string&) { return false; }),
            "gpu-h100");
  EXPECT_EQ(DemandPool({}, [](const std::string&) { return true; }), "");
}

}  // namespace
}  // namespace wsched::scaling
