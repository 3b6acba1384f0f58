#include "server/replica/feed_follower.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"

namespace wsched::replica {

FeedFollower::FeedFollower(FeedSource* source, FeedSink* sink, metrics::Metrics* metrics,
                           Clock clock, int batch_limit)
    : source_(source), sink_(sink), metrics_(metrics), clock_(std::move(clock)),
      batch_limit_(batch_limit) {}

FeedFollower::~FeedFollower() { StopFollowing(); }

void FeedFollower::StopFollowing() {
  {
    absl::MutexLock lock(&wake_mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int64_t FeedFollower::position() const {
  absl::MutexLock lock(&mu_);
  return position_;
}

absl::Time FeedFollower::caught_up_at() const {
  absl::MutexLock lock(&caught_up_mu_);
  return caught_up_at_;
}

absl::Status FeedFollower::CatchUp() {
  const int64_t begun_before = begun_.load();
  absl::MutexLock lock(&mu_);
  // One that began after this call arrived has already read everything
  // committed before it.
  if (last_reached_head_ > begun_before) return absl::OkStatus();
  return CatchUpLocked();
}

absl::Status FeedFollower::CatchUpLocked() {
  const int64_t number = ++begun_;
  const absl::Time began = clock_();
  absl::Status status = FollowToHeadLocked();
  if (status.ok()) {
    last_reached_head_ = number;
    absl::MutexLock lock(&caught_up_mu_);
    caught_up_at_ = began;
  }
  return status;
}

absl::Status FeedFollower::ReloadLocked(absl::string_view reason) {
  absl::StatusOr<int64_t> loaded = sink_->Reload();
  metrics_->SetDatabaseUp(loaded.ok() || !absl::IsUnavailable(loaded.status()));
  if (!loaded.ok()) return loaded.status();
  metrics_->FeedFullReload(reason);
  // At start it is the plan; after a gap it is the exception worth a look.
  log::Write(reason == "start" ? log::Level::kInfo : log::Level::kWarning,
             "replica state reloaded from the database",
        {{"reason", std::string(reason)}, {"from_position", absl::StrCat(position_)},
         {"to_position", absl::StrCat(*loaded)}});
  position_ = *loaded;
  metrics_->ObserveFeedLag(0, absl::ZeroDuration());
  return absl::OkStatus();
}

absl::Status FeedFollower::FollowToHeadLocked() {
  if (position_ < 0) return ReloadLocked("start");
  while (true) {
    absl::StatusOr<store::FeedRead> read = source_->ReadSince(position_, batch_limit_);
    metrics_->SetDatabaseUp(read.ok() || !absl::IsUnavailable(read.status()));
    if (!read.ok()) return read.status();
    std::vector<store::ChangeRecord>& records = read->records;
    // The head went backwards (the database was restored) or entries after
    // our position are gone (pruned): what we hold can no longer be
    // brought up to date by deltas.
    if (read->head < position_ || (records.empty() && read->head > position_) ||
        (!records.empty() && records.front().seq != position_ + 1)) {
      return ReloadLocked("gap");
    }
    if (records.empty()) {
      metrics_->ObserveFeedLag(0, absl::ZeroDuration());
      return absl::OkStatus();
    }
    // Contiguous by construction; stop at any hole so the next read tells.
    for (size_t i = 1; i < records.size(); ++i) {
      if (records[i].seq != records[i - 1].seq + 1) {
        records.resize(i);
        break;
      }
    }
    metrics_->ObserveFeedLag(read->head - position_,
                             std::max(absl::ZeroDuration(), clock_() - records.front().written_at));
    if (absl::Status applied = sink_->Apply(records); !applied.ok()) return applied;
    std::map<store::Entity, int64_t> by_entity;
    for (const auto& record : records) {
      for (const auto& change : record.changes) by_entity[change.entity]++;
    }
    for (const auto& [entity, count] : by_entity) {
      metrics_->FeedDeltasApplied(store::EntityName(entity), count);
    }
    position_ = records.back().seq;
    if (position_ >= read->head) {
      metrics_->ObserveFeedLag(0, absl::ZeroDuration());
      return absl::OkStatus();
    }
  }
}

void FeedFollower::StartFollowing(absl::Duration poll, absl::Duration gap) {
  thread_ = std::thread([this, poll, gap] { Run(poll, gap); });
}

bool FeedFollower::StoppedWithin(absl::Duration timeout) {
  absl::MutexLock lock(&wake_mu_);
  auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(wake_mu_) { return stopping_; };
  wake_mu_.AwaitWithTimeout(absl::Condition(&stop), timeout);
  return stopping_;
}

void FeedFollower::Notify() {
  absl::MutexLock lock(&wake_mu_);
  notified_ = true;
}

void FeedFollower::Run(absl::Duration poll, absl::Duration gap) {
  while (true) {
    {
      absl::MutexLock lock(&wake_mu_);
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(wake_mu_) {
        return stopping_ || notified_;
      };
      wake_mu_.AwaitWithTimeout(absl::Condition(&wake), poll);
      if (stopping_) return;
      notified_ = false;
    }
    if (absl::Status s = CatchUp(); !s.ok()) {
      log::Warning("following the change feed failed; retrying",
                   {{"error", std::string(s.message())}});
      if (StoppedWithin(absl::Milliseconds(200))) return;
    } else if (gap > absl::ZeroDuration() && StoppedWithin(gap)) {
      return;
    }
  }
}

}  // namespace wsched::replica
