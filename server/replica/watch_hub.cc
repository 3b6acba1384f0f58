#include "server/replica/watch_hub.h"

#include <algorithm>

namespace wsched::replica {

int64_t WatchHub::Wait(const std::string& id, int64_t after, absl::Duration timeout,
                       absl::FunctionRef<int64_t()> current) {
  {
    absl::MutexLock lock(&mu_);
    watched_[id].waiters++;
  }
  const int64_t known = current();
  absl::MutexLock lock(&mu_);
  Watched& watched = watched_[id];
  watched.version = std::max(watched.version, known);
  while (!stopping_ && watched.version <= after) {
    if (watched.changed.WaitWithTimeout(&mu_, timeout)) break;  // Timed out.
  }
  const int64_t version = watched.version;
  if (--watched.waiters == 0) watched_.erase(id);
  return version;
}

void WatchHub::Publish(const std::string& id, int64_t version) {
  absl::MutexLock lock(&mu_);
  auto it = watched_.find(id);
  if (it == watched_.end() || version <= it->second.version) return;
  it->second.version = version;
  it->second.changed.SignalAll();
  wakeups_++;
}

void WatchHub::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  for (auto& [id, watched] : watched_) watched.changed.SignalAll();
}

size_t WatchHub::watched_ids() const {
  absl::MutexLock lock(&mu_);
  return watched_.size();
}

int64_t WatchHub::wakeups() const {
  absl::MutexLock lock(&mu_);
  return wakeups_;
}

}  // namespace wsched::replica
