// The measured node start and driver install times, read from the database
// at most every `max_age` (every replica reads the same samples, so the
// estimate does not depend on which replica answers).
#ifndef WSCHED_SERVER_INVENTORY_TIMING_STATS_H_
#define WSCHED_SERVER_INVENTORY_TIMING_STATS_H_

#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/database.h"
#include "server/store/types.h"

namespace wsched::inventory {

class TimingStats {
 public:
  TimingStats(store::Database* db, std::function<absl::Time()> clock,
              absl::Duration max_age = absl::Seconds(10));

  // The figures, reloaded when older than max_age. When the database is
  // unreachable the last figures stay (an estimate, not a decision).
  store::TimingFigures Get() ABSL_LOCKS_EXCLUDED(mu_);
  // Forget the cache, e.g. after recording a sample.
  void Invalidate() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  store::Database* const db_;
  const std::function<absl::Time()> clock_;
  const absl::Duration max_age_;
  absl::Mutex mu_;
  store::TimingFigures figures_ ABSL_GUARDED_BY(mu_);
  absl::Time loaded_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace wsched::inventory

#endif  // WSCHED_SERVER_INVENTORY_TIMING_STATS_H_
