#include "server/watch/history_follower.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"

namespace wsched::watch {

template <typename K>
BasicHistoryFollower<K>::BasicHistoryFollower(BasicHistorySource<K> *source,
                                              BasicFanout<K> *fanout,
                                              Options options, Clock clock)
    : source_(source), fanout_(fanout), options_(options),
      clock_(std::move(clock)) {}

template <typename K> BasicHistoryFollower<K>::~BasicHistoryFollower() {
  Stop();
}

template <typename K> void BasicHistoryFollower<K>::Start() {
  // From the head: nothing before it is anyone's to hand out.
  if (absl::StatusOr<int64_t> head = source_->Head(); head.ok()) fanout_->SkipTo(*head);
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

template <typename K> void BasicHistoryFollower<K>::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

template <typename K> void BasicHistoryFollower<K>::Notify() {
  absl::MutexLock lock(&mu_);
  notified_ = true;
}

template <typename K>
bool BasicHistoryFollower<K>::Await(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || notified_; };
  mu_.AwaitWithTimeout(absl::Condition(&wake), timeout);
  notified_ = false;
  return !stopping_;
}

template <typename K> absl::Status BasicHistoryFollower<K>::FollowOnce() {
  if (fanout_->size() == 0) {
    absl::StatusOr<int64_t> head = source_->Head();
    if (!head.ok()) return head.status();
    if (fanout_->SkipTo(*head)) return absl::OkStatus();
  }
  while (true) {
    const int64_t position = fanout_->position();
    absl::StatusOr<BasicHistoryRead<K>> read =
        source_->ReadSince(position, options_.page);
    if (!read.ok()) return read.status();
    if (!read->reaches) {
      // Behind by more than --feed_retention: what came in between is gone
      // for the streams that had not read it themselves.
      fanout_->Rebase(
          absl::UnavailableError(absl::StrCat(
              "this replica fell behind the change log (version ", position,
              " is no longer kept); resume on any replica from the last version received")),
          read->oldest);
      log::Warning(
          absl::StrCat("following the ", K::kName,
                       " history skipped what the change log no longer keeps"),
          {{"position", absl::StrCat(position)},
           {"oldest", absl::StrCat(read->oldest)}});
      continue;
    }
    if (read->entries.empty()) break;
    fanout_->Publish(read->entries, clock_());
    if (read->entries.back().version >= read->head) break;
  }
  fanout_->Bookmark(clock_());
  return absl::OkStatus();
}

template <typename K> void BasicHistoryFollower<K>::Run() {
  while (Await(options_.poll)) {
    if (absl::Status s = FollowOnce(); !s.ok()) {
      log::Warning(
          absl::StrCat("following the ", K::kName, " history failed; retrying"),
          {{"error", std::string(s.message())}});
      if (!Await(absl::Milliseconds(200))) return;
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.gap)) return;
  }
}

template class BasicHistoryFollower<WorkspaceKind>;
template class BasicHistoryFollower<NodeKind>;

}  // namespace wsched::watch
