#include "server/scheduler/timing_stats.h"

namespace wsched::scheduler {

TimingStats::TimingStats(store::Database* db, std::function<absl::Time()> clock,
                         absl::Duration max_age)
    : db_(db), clock_(std::move(clock)), max_age_(max_age) {}

store::TimingFigures TimingStats::Get() {
  const absl::Time now = clock_();
  {
    absl::MutexLock lock(&mu_);
    if (now - loaded_at_ < max_age_) return figures_;
  }
  store::TimingFigures loaded;
  absl::Status status = db_->InTransaction("reading timing samples", [&](pqxx::work& txn) {
    loaded = store::LoadTimingFigures(txn);
    return absl::OkStatus();
  });
  absl::MutexLock lock(&mu_);
  if (status.ok()) {
    figures_ = std::move(loaded);
    loaded_at_ = now;
  }
  return figures_;
}

void TimingStats::Invalidate() {
  absl::MutexLock lock(&mu_);
  loaded_at_ = absl::InfinitePast();
}

}  // namespace wsched::scheduler
