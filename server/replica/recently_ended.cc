#include "server/replica/recently_ended.h"

namespace wsched::replica {

void RecentlyEnded::Add(const std::string& id, int64_t version, absl::Time now) {
  Expire(now);
  versions_[id] = version;
  order_.push_back({id, version, now});
  while (order_.size() > limits_.max_entries) PopOldest();
}

int64_t RecentlyEnded::VersionOf(const std::string& id) const {
  auto it = versions_.find(id);
  return it == versions_.end() ? 0 : it->second;
}

void RecentlyEnded::Expire(absl::Time now) {
  while (!order_.empty() && now - order_.front().at > limits_.keep_for) PopOldest();
}

void RecentlyEnded::PopOldest() {
  const Entry& oldest = order_.front();
  auto it = versions_.find(oldest.id);
  if (it != versions_.end() && it->second == oldest.version) versions_.erase(it);
  order_.pop_front();
}

}  // namespace wsched::replica
