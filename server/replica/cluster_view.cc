#include "server/replica/cluster_view.h"

namespace wsched::replica {

std::shared_ptr<const ClusterView> ClusterViewCache::Get(uint64_t generation, Build build) {
  absl::MutexLock lock(&mu_);
  if (current_ == nullptr || current_->generation != generation) {
    current_ = build();
    copies_++;
  }
  return current_;
}

int64_t ClusterViewCache::copies() const {
  absl::MutexLock lock(&mu_);
  return copies_;
}

}  // namespace wsched::replica
