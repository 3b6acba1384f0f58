#include "server/process/thread_priority.h"

#include <thread>

#include "gtest/gtest.h"

namespace wsched::process {
namespace {

TEST(ThreadPriorityTest, LowersOnlyTheCallingThread) {
  absl::StatusOr<int> before = CurrentThreadNice();
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<int> in_thread;
  std::thread worker([&] {
    absl::Status lowered = LowerCurrentThreadPriority(5);
    ASSERT_TRUE(lowered.ok()) << lowered;
    in_thread = CurrentThreadNice();
  });
  worker.join();
  ASSERT_TRUE(in_thread.ok()) << in_thread.status();
  EXPECT_EQ(*in_thread, std::min(*before + 5, 19));
  absl::StatusOr<int> after = CurrentThreadNice();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *before);  // The test's own thread kept its priority.
}

TEST(ThreadPriorityTest, StopsAtTheLowestPriority) {
  absl::StatusOr<int> in_thread;
  std::thread worker([&] {
    ASSERT_TRUE(LowerCurrentThreadPriority(19).ok());
    ASSERT_TRUE(LowerCurrentThreadPriority(19).ok());
    in_thread = CurrentThreadNice();
  });
  worker.join();
  ASSERT_TRUE(in_thread.ok());
  EXPECT_EQ(*in_thread, 19);
}

TEST(ThreadPriorityTest, RefusesAnIncrementOutOfRange) {
  for (int increment : {0, -1, 20}) {
    absl::Status status = LowerCurrentThreadPriority(increment);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << increment;
    EXPECT_NE(status.message().find("increment must be 1..19"), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace wsched::process
