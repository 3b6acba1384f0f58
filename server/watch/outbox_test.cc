// One stream's bounded buffer (server/watch/outbox.h).
#include "server/watch/outbox.h"

#include <atomic>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/core/error_reason.h"

namespace wsched::watch {
namespace {

Batch Changes(int64_t version) { return Batch{Batch::Kind::kChanges, version, {}}; }

// The version of the next batch taken; fails the test when there is none.
int64_t TakeVersion(Outbox& outbox) {
  Outbox::Next next = outbox.Take();
  EXPECT_TRUE(next.batch.has_value());
  EXPECT_FALSE(next.end.has_value());
  return next.batch ? next.batch->version : -1;
}

TEST(OutboxTest, ARunTakesConsecutiveChangesUpToItsLimitAndStopsAtAnythingElse) {
  Outbox outbox(16, [] {});
  for (int64_t v : {1, 2, 3}) outbox.Deliver(Changes(v));
  outbox.Deliver(Batch{Batch::Kind::kBookmark, 4, {}});
  outbox.Deliver(Changes(5));
  Outbox::Run first = outbox.TakeRun(2);
  ASSERT_EQ(first.batches.size(), 2u);
  EXPECT_EQ(first.batches[1].version, 2);
  EXPECT_TRUE(first.more);
  Outbox::Run second = outbox.TakeRun(8);
  ASSERT_EQ(second.batches.size(), 1u);  // The bookmark ends the run.
  EXPECT_EQ(second.batches[0].version, 3);
  Outbox::Run bookmark = outbox.TakeRun(8);
  ASSERT_EQ(bookmark.batches.size(), 1u);  // Never merged with changes.
  EXPECT_EQ(bookmark.batches[0].kind, Batch::Kind::kBookmark);
  Outbox::Run last = outbox.TakeRun(8);
  ASSERT_EQ(last.batches.size(), 1u);
  EXPECT_FALSE(last.more);
}

TEST(OutboxTest, BatchesAreTakenInTheOrderDelivered) {
  Outbox outbox(8, [] {});
  outbox.Deliver(Changes(3));
  outbox.Deliver(Batch{Batch::Kind::kBookmark, 4, {}});
  outbox.Deliver(Changes(6));
  EXPECT_EQ(TakeVersion(outbox), 3);
  Outbox::Next bookmark = outbox.Take();
  ASSERT_TRUE(bookmark.batch.has_value());
  EXPECT_EQ(bookmark.batch->kind, Batch::Kind::kBookmark);
  EXPECT_EQ(bookmark.batch->version, 4);
  EXPECT_EQ(TakeVersion(outbox), 6);
  // Nothing for now, and no end either.
  Outbox::Next nothing = outbox.Take();
  EXPECT_FALSE(nothing.batch.has_value());
  EXPECT_FALSE(nothing.end.has_value());
}

TEST(OutboxTest, TheTransportIsWokenOnlyWhenTheOutboxStopsBeingEmpty) {
  int wakes = 0;
  Outbox outbox(8, [&] { ++wakes; });
  outbox.Deliver(Changes(1));
  EXPECT_EQ(wakes, 1);
  // It has not taken the first yet: no need to wake it again.
  outbox.Deliver(Changes(2));
  ASSERT_TRUE(outbox.Put(Changes(3)));
  EXPECT_EQ(wakes, 1);
  EXPECT_EQ(TakeVersion(outbox), 1);
  outbox.Deliver(Changes(4));  // Not empty: 2 and 3 are still there.
  EXPECT_EQ(wakes, 1);
  EXPECT_EQ(TakeVersion(outbox), 2);
  EXPECT_EQ(TakeVersion(outbox), 3);
  EXPECT_EQ(TakeVersion(outbox), 4);
  // Empty again: the next one wakes it, whichever side puts it.
  ASSERT_TRUE(outbox.Put(Changes(5)));
  EXPECT_EQ(wakes, 2);
  EXPECT_EQ(TakeVersion(outbox), 5);
  outbox.Deliver(Changes(6));
  EXPECT_EQ(wakes, 3);
}

TEST(OutboxTest, AStreamTooSlowForTheFanoutEndsWithTheLastVersionItWasSentWhole) {
  int wakes = 0;
  Outbox outbox(2, [&] { ++wakes; });
  outbox.Deliver(Changes(3));
  outbox.Deliver(Changes(5));
  outbox.Sent(3);
  outbox.Sent(5);
  EXPECT_EQ(TakeVersion(outbox), 3);
  EXPECT_EQ(TakeVersion(outbox), 5);
  outbox.Deliver(Changes(8));
  outbox.Deliver(Changes(9));
  EXPECT_EQ(wakes, 2);
  // The fanout never waits: one past the limit ends the stream.
  outbox.Deliver(Changes(10));
  EXPECT_EQ(wakes, 3);

  Outbox::Next next = outbox.Take();
  // What was buffered is dropped: the reader resumes from what it got whole.
  EXPECT_FALSE(next.batch.has_value());
  ASSERT_TRUE(next.end.has_value());
  EXPECT_EQ(next.end->code(), absl::StatusCode::kResourceExhausted);
  std::optional<core::ErrorDetails> details = core::DetailsOf(*next.end);
  ASSERT_TRUE(details.has_value());
  EXPECT_EQ(details->reason, core::ErrorReason::kWatchTooSlow);
  EXPECT_EQ(details->metadata["last_version"], "5");
  EXPECT_EQ(details->metadata["buffer"], "2");

  // Ended: what comes after is ignored and the end stays.
  outbox.Deliver(Changes(11));
  EXPECT_EQ(wakes, 3);
  next = outbox.Take();
  EXPECT_FALSE(next.batch.has_value());
  ASSERT_TRUE(next.end.has_value());
  EXPECT_EQ(core::DetailsOf(*next.end)->reason, core::ErrorReason::kWatchTooSlow);
  EXPECT_FALSE(outbox.Put(Changes(12)));
}

TEST(OutboxTest, EndSendsWhatIsBufferedFirst) {
  int wakes = 0;
  Outbox outbox(8, [&] { ++wakes; });
  outbox.Deliver(Changes(1));
  outbox.Deliver(Changes(2));
  outbox.End(absl::CancelledError("server stopping"));
  EXPECT_EQ(wakes, 1);  // The transport already has something to take.
  EXPECT_EQ(TakeVersion(outbox), 1);
  EXPECT_EQ(TakeVersion(outbox), 2);
  Outbox::Next end = outbox.Take();
  EXPECT_FALSE(end.batch.has_value());
  ASSERT_TRUE(end.end.has_value());
  EXPECT_EQ(end.end->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(end.end->message(), "server stopping");
  // The first end is the one sent.
  outbox.End(absl::InternalError("later"));
  outbox.Deliver(Changes(3));
  end = outbox.Take();
  EXPECT_FALSE(end.batch.has_value());
  ASSERT_TRUE(end.end.has_value());
  EXPECT_EQ(end.end->code(), absl::StatusCode::kCancelled);
}

TEST(OutboxTest, EndingAnEmptyOutboxWakesTheTransport) {
  int wakes = 0;
  Outbox outbox(8, [&] { ++wakes; });
  outbox.End(absl::OkStatus());
  EXPECT_EQ(wakes, 1);
  Outbox::Next end = outbox.Take();
  ASSERT_TRUE(end.end.has_value());
  EXPECT_TRUE(end.end->ok());
}

TEST(OutboxTest, AnAbandonedStreamEndsWithTheFanoutsReason) {
  Outbox outbox(8, [] {});
  outbox.Deliver(Changes(1));
  outbox.Abandon(absl::UnavailableError("fell behind"));
  EXPECT_EQ(TakeVersion(outbox), 1);
  Outbox::Next end = outbox.Take();
  ASSERT_TRUE(end.end.has_value());
  EXPECT_EQ(end.end->code(), absl::StatusCode::kUnavailable);
}

TEST(OutboxTest, PutWaitsForRoomAndReturnsOnlyAfterATake) {
  Outbox outbox(1, [] {});
  outbox.Deliver(Changes(1));  // Full.
  std::atomic<bool> taken{false};
  absl::Notification putting;
  bool put = false;
  bool returned_after_take = false;
  std::thread producer([&] {
    putting.Notify();
    put = outbox.Put(Changes(2));
    // There was room only once the main thread took 1.
    returned_after_take = taken.load();
  });
  putting.WaitForNotification();
  taken.store(true);
  EXPECT_EQ(TakeVersion(outbox), 1);
  producer.join();
  EXPECT_TRUE(put);
  EXPECT_TRUE(returned_after_take);
  EXPECT_EQ(TakeVersion(outbox), 2);
}

TEST(OutboxTest, APutWaitingForRoomReturnsFalseOnceTheStreamIsClosed) {
  Outbox outbox(1, [] {});
  outbox.Deliver(Changes(1));  // Full, and nobody will take.
  absl::Notification putting;
  std::optional<bool> put;
  std::thread producer([&] {
    putting.Notify();
    put = outbox.Put(Changes(2));
  });
  putting.WaitForNotification();
  // Whether the Put is already waiting or not yet started, it must not get in.
  outbox.Close();
  producer.join();
  ASSERT_TRUE(put.has_value());
  EXPECT_FALSE(*put);
  Outbox::Next next = outbox.Take();
  EXPECT_FALSE(next.batch.has_value());
  EXPECT_FALSE(next.end.has_value());
}

TEST(OutboxTest, AClosedOutboxTakesNothingMore) {
  int wakes = 0;
  Outbox outbox(8, [&] { ++wakes; });
  outbox.Deliver(Changes(1));
  outbox.Close();
  outbox.Deliver(Changes(2));
  outbox.End(absl::CancelledError("late"));
  EXPECT_FALSE(outbox.Put(Changes(3)));
  EXPECT_EQ(wakes, 1);
  Outbox::Next next = outbox.Take();
  EXPECT_FALSE(next.batch.has_value());
  EXPECT_FALSE(next.end.has_value());
}

TEST(OutboxTest, APutAfterTheEndIsRefused) {
  Outbox outbox(8, [] {});
  outbox.End(absl::CancelledError("done"));
  EXPECT_FALSE(outbox.Put(Changes(1)));
  Outbox::Next next = outbox.Take();
  EXPECT_FALSE(next.batch.has_value());
  ASSERT_TRUE(next.end.has_value());
}

}  // namespace
}  // namespace wsched::watch
