// "Time to GPU": how long a workspace waiting for a new node will likely
// wait, from how long recent nodes took from request to ready.
#ifndef WSCHED_SERVER_SCALING_PROVISION_ESTIMATE_H_
#define WSCHED_SERVER_SCALING_PROVISION_ESTIMATE_H_

#include <cstddef>
#include <deque>
#include <optional>

#include "absl/time/time.h"

namespace wsched::scaling {

// The last few provision-to-ready durations of one pool. Old samples drop
// out so the estimate follows the provider's current behaviour.
class ProvisionHistory {
 public:
  static constexpr size_t kDefaultSamples = 20;
  explicit ProvisionHistory(size_t max_samples = kDefaultSamples)
      : max_samples_(max_samples == 0 ? 1 : max_samples) {}

  // Negative durations (clock skew between replicas) are ignored.
  void Record(absl::Duration provision_to_ready);
  const std::deque<absl::Duration>& samples() const { return samples_; }

 private:
  size_t max_samples_;
  std::deque<absl::Duration> samples_;
};

// Median of the recorded samples (robust against one slow boot), else the
// configured default, else no estimate.
std::optional<absl::Duration> EstimatePlacementDelay(
    const ProvisionHistory& history, std::optional<absl::Duration> configured_default);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_PROVISION_ESTIMATE_H_
