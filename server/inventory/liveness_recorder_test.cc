#include "server/inventory/liveness_recorder.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::inventory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class LivenessRecorderTest : public ::testing::Test {
 protected:
  LivenessRecorder recorder_{[this](const std::vector<std::string>& nodes) -> absl::Status {
    if (!up_) return absl::UnavailableError("database down");
    std::vector<std::string> sorted = nodes;
    std::sort(sorted.begin(), sorted.end());
    writes_.push_back(sorted);
    return absl::OkStatus();
  }};
  std::vector<std::vector<std::string>> writes_;
  bool up_ = true;
};

TEST_F(LivenessRecorderTest, ManyHeartbeatsBecomeOneWriteWithEachNodeOnce) {
  for (int i = 0; i < 100; ++i) recorder_.Record(i % 2 == 0 ? "a" : "b");
  ASSERT_TRUE(recorder_.Flush().ok());
  ASSERT_EQ(writes_.size(), 1u);
  EXPECT_THAT(writes_[0], ElementsAre("a", "b"));
}

TEST_F(LivenessRecorderTest, NothingHeardWritesNothing) {
  ASSERT_TRUE(recorder_.Flush().ok());
  EXPECT_THAT(writes_, IsEmpty());
}

TEST_F(LivenessRecorderTest, AFailedWriteKeepsTheNodesForTheNextFlush) {
  recorder_.Record("a");
  up_ = false;
  EXPECT_FALSE(recorder_.Flush().ok());
  recorder_.Record("b");
  up_ = true;
  ASSERT_TRUE(recorder_.Flush().ok());
  ASSERT_EQ(writes_.size(), 1u);
  EXPECT_THAT(writes_[0], ElementsAre("a", "b"));
  ASSERT_TRUE(recorder_.Flush().ok());
  EXPECT_EQ(writes_.size(), 1u);  // Written once only.
}

}  // namespace
}  // namespace wsched::inventory
