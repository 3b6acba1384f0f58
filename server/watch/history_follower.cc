#include "server/watch/history_follower.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"

namespace wsched::watch {

HistoryFollower::HistoryFollower(HistorySource *source, Fanout *fanout,
                                 Options options, Clock clock)
    : source_(source), fanout_(fanout), options_(options),
      clock_(std::move(clock)) {}

HistoryFollower::~HistoryFollower() { Stop(); }

void HistoryFollower::Start() {
  // From the head: nothing before it is anyone's to hand out.
  if (absl::StatusOr<int64_t> head = source_->Head(); head.ok()) fanout_->SkipTo(*head);
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void HistoryFollower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void HistoryFollower::Notify() {
  absl::MutexLock lock(&mu_);
  notified_ = true;
}

bool HistoryFollower::Await(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || notified_; };
  mu_.AwaitWithTimeout(absl::Condition(&wake), timeout);
  notified_ = false;
  return !stopping_;
}

absl::Status HistoryFollower::FollowOnce() {
  if (fanout_->size() == 0) {
    absl::StatusOr<int64_t> head = source_->Head();
    if (!head.ok()) return head.status();
    if (fanout_->SkipTo(*head)) return absl::OkStatus();
  }
  while (true) {
    const int64_t position = fanout_->position();
    absl::StatusOr<HistoryRead> read = source_->ReadSince(position, options_.page);
    if (!read.ok()) return read.status();
    if (!read->reaches) {
      // Behind by more than --feed_retention: what came in between is gone
      // for the streams that had not read it themselves.
      fanout_->Rebase(
          absl::UnavailableError(absl::StrCat(
              "this replica fell behind the change log (version ", position,
              " is no longer kept); resume on any replica from the last version received")),
          read->oldest);
      log::Warning("following the workspace history skipped what the change log no longer keeps",
                   {{"position", absl::StrCat(position)}, {"oldest", absl::StrCat(read->oldest)}});
      continue;
    }
    if (read->entries.empty()) break;
    fanout_->Publish(read->entries, clock_());
    if (read->entries.back().version >= read->head) break;
  }
  fanout_->Bookmark(clock_());
  return absl::OkStatus();
}

void HistoryFollower::Run() {
  while (Await(options_.poll)) {
    if (absl::Status s = FollowOnce(); !s.ok()) {
      log::Warning("following the workspace history failed; retrying",
                   {{"error", std::string(s.message())}});
      if (!Await(absl::Milliseconds(200))) return;
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.gap)) return;
  }
}

}  // namespace wsched::watch
