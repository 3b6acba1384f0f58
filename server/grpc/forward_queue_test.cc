#include "server/grpc/forward_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace wsched::grpc_api {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ForwardQueueTest, ACallThatFindsASlotFreeGoesAtOnceAlone) {
  ForwardQueue<int> queue(/*max_in_flight=*/2, /*max_batch=*/8);
  EXPECT_THAT(queue.Add(1), ElementsAre(1));
  EXPECT_THAT(queue.Add(2), ElementsAre(2));
  EXPECT_EQ(queue.in_flight(), 2);
  EXPECT_EQ(queue.waiting(), 0u);
}

TEST(ForwardQueueTest, CallsThatFindEverySlotTakenGoTogetherWhenABatchIsAnswered) {
  ForwardQueue<int> queue(/*max_in_flight=*/1, /*max_batch=*/8);
  EXPECT_THAT(queue.Add(1), ElementsAre(1));
  EXPECT_THAT(queue.Add(2), IsEmpty());
  EXPECT_THAT(queue.Add(3), IsEmpty());
  EXPECT_THAT(queue.Add(4), IsEmpty());
  EXPECT_EQ(queue.waiting(), 3u);
  // The freed slot carries every waiting call, in the order they came.
  EXPECT_THAT(queue.Answered(), ElementsAre(2, 3, 4));
  EXPECT_EQ(queue.in_flight(), 1);
  EXPECT_EQ(queue.waiting(), 0u);
}

TEST(ForwardQueueTest, AnAnsweredBatchWithNothingWaitingFreesItsSlot) {
  ForwardQueue<int> queue(/*max_in_flight=*/1, /*max_batch=*/8);
  EXPECT_THAT(queue.Add(1), ElementsAre(1));
  EXPECT_THAT(queue.Answered(), IsEmpty());
  EXPECT_EQ(queue.in_flight(), 0);
  EXPECT_THAT(queue.Add(2), ElementsAre(2));  // Goes at once again.
}

TEST(ForwardQueueTest, ABatchHoldsAtMostMaxBatchCallsAndTheRestWaitForTheNextSlot) {
  ForwardQueue<int> queue(/*max_in_flight=*/1, /*max_batch=*/2);
  EXPECT_THAT(queue.Add(1), ElementsAre(1));
  for (int i = 2; i <= 6; ++i) EXPECT_THAT(queue.Add(i), IsEmpty());
  EXPECT_THAT(queue.Answered(), ElementsAre(2, 3));
  EXPECT_THAT(queue.Answered(), ElementsAre(4, 5));
  EXPECT_THAT(queue.Answered(), ElementsAre(6));
  EXPECT_THAT(queue.Answered(), IsEmpty());
  EXPECT_EQ(queue.in_flight(), 0);
}

TEST(ForwardQueueTest, MoveOnlyCallsPassThrough) {
  ForwardQueue<std::unique_ptr<int>> queue(/*max_in_flight=*/1, /*max_batch=*/4);
  auto first = queue.Add(std::make_unique<int>(7));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(*first[0], 7);
}

}  // namespace
}  // namespace wsched::grpc_api
