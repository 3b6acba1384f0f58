#include "server/inventory/timing_stats.h"

#include "server/store/unit_of_work.h"

namespace wsched::inventory {

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
  absl::Status status = store::UnitOfWork::Run(*db_, "reading timing samples",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    loaded = unit.timings().LoadFigures();
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

}  // namespace wsched::inventory
