#include "server/scaling/backoff.h"

#include <algorithm>

namespace wsched::scaling {

void Backoff::RecordFailure(absl::Time now) {
  ++consecutive_failures_;
  last_failure_at_ = std::max(last_failure_at_, now);
  absl::Duration pause = policy_.initial;
  // Stop doubling once at the cap; also keeps the shift count small.
  for (int i = 1; i < consecutive_failures_ && pause < policy_.max; ++i) pause *= 2;
  pause = std::min(pause, policy_.max);
  // A failure reported during a pause never shortens it.
  absl::Time until = now + pause;
  until_ = until_ ? std::max(*until_, until) : until;
}

void Backoff::RecordSuccess() {
  consecutive_failures_ = 0;
  until_.reset();
}

std::optional<absl::Time> Backoff::ActiveUntil(absl::Time now) const {
  if (!Active(now)) return std::nullopt;
  return until_;
}

}  // namespace wsched::scaling
