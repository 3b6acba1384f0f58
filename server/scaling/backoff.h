// Per-pool backoff after provisioning failures and stockouts: asking a cloud
// for nodes it cannot give only burns quota and API rate, so each failure in
// a row doubles the pause before the pool may grow again.
#ifndef WSCHED_SERVER_SCALING_BACKOFF_H_
#define WSCHED_SERVER_SCALING_BACKOFF_H_

#include <optional>

#include "absl/time/time.h"

namespace wsched::scaling {

struct BackoffPolicy {
  absl::Duration initial = absl::Seconds(30);
  absl::Duration max = absl::Minutes(10);
};

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy = {}) : policy_(policy) {}

  // Starts (or extends) a pause: initial, then doubling, capped at max.
  void RecordFailure(absl::Time now);
  // A node came up: the provider works again, the next failure starts over.
  void RecordSuccess();

  bool Active(absl::Time now) const { return until_.has_value() && now < *until_; }
  // End of the current pause; nullopt when none is in effect at `now`.
  std::optional<absl::Time> ActiveUntil(absl::Time now) const;
  int consecutive_failures() const { return consecutive_failures_; }
  // When the latest failure was recorded (InfinitePast: never). A node that
  // came up before it does not prove the provider works again.
  absl::Time last_failure_at() const { return last_failure_at_; }

 private:
  const BackoffPolicy policy_;
  int consecutive_failures_ = 0;
  absl::Time last_failure_at_ = absl::InfinitePast();
  std::optional<absl::Time> until_;
};

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_BACKOFF_H_
