#include "server/store/leader_lock.h"

namespace wsched::store {

LeaderLock::LeaderLock(std::string url, int64_t key, LeaseOptions lease)
    : lease_(std::move(url), key, lease, "wsched scaling leader lock") {}

LeaderLock::~LeaderLock() = default;

bool LeaderLock::TryAcquire() {
  absl::StatusOr<bool> held = lease_.Probe();
  return held.ok() && *held;
}

void LeaderLock::Release() { lease_.Release(); }

}  // namespace wsched::store
