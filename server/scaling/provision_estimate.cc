#include "server/scaling/provision_estimate.h"

#include <algorithm>
#include <vector>

namespace wsched::scaling {

void ProvisionHistory::Record(absl::Duration provision_to_ready) {
  if (provision_to_ready < absl::ZeroDuration()) return;
  samples_.push_back(provision_to_ready);
  while (samples_.size() > max_samples_) samples_.pop_front();
}

std::optional<absl::Duration> EstimatePlacementDelay(
    const ProvisionHistory& history, std::optional<absl::Duration> configured_default) {
  if (history.samples().empty()) return configured_default;
  std::vector<absl::Duration> sorted(history.samples().begin(), history.samples().end());
  std::sort(sorted.begin(), sorted.end());
  size_t middle = sorted.size() / 2;
  if (sorted.size() % 2 == 1) return sorted[middle];
  return (sorted[middle - 1] + sorted[middle]) / 2;
}

}  // namespace wsched::scaling
