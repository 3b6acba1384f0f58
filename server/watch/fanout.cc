#include "server/watch/fanout.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace wsched::watch {

template <typename K>
typename BasicFanout<K>::Joined
BasicFanout<K>::Join(Subscriber *subscriber, Filter filter, int64_t after,
                     absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (after < position_) return {std::nullopt, position_};
  const Id id = next_id_++;
  std::string key = IndexKeyOf(filter);
  index_[key].insert(id);
  members_.emplace(id, Member{subscriber, std::move(filter), std::move(key), after, now});
  return {id, position_};
}

template <typename K> void BasicFanout<K>::Leave(Id id) {
  absl::MutexLock lock(&mu_);
  auto it = members_.find(id);
  if (it == members_.end()) return;
  auto filed = index_.find(it->second.key);
  filed->second.erase(id);
  if (filed->second.empty()) index_.erase(filed);
  members_.erase(it);
}

template <typename K>
void BasicFanout<K>::CandidatesLocked(const typename K::Happened &happened,
                                      absl::flat_hash_set<Id> &out) const {
  absl::flat_hash_set<std::string> keys = {"*"};
  KeysOf(happened, keys);
  for (const std::string& key : keys) {
    auto filed = index_.find(key);
    if (filed != index_.end()) out.insert(filed->second.begin(), filed->second.end());
  }
}

template <typename K>
void BasicFanout<K>::HandOutLocked(const Entry &entry, absl::Time now) {
  absl::flat_hash_set<Id> candidates;
  for (const auto& happened : entry.happened) CandidatesLocked(*happened, candidates);
  // The distinct batches of this entry: streams whose changes are the same
  // get copies of one, encoded once (EncodingMemo).
  std::vector<BasicBatch<K>> distinct;
  for (Id id : candidates) {
    Member& member = members_.at(id);
    if (entry.version <= member.last_sent) continue;  // It read this far itself.
    std::optional<BasicBatch<K>> batch = BatchFor(member.filter, entry);
    if (!batch) continue;
    auto same = std::find_if(
        distinct.begin(), distinct.end(),
        [&](const BasicBatch<K> &seen) { return SameChanges(seen, *batch); });
    if (same == distinct.end()) {
      batch->memo = std::make_shared<EncodingMemo>();
      distinct.push_back(*batch);
    } else {
      batch->memo = same->memo;
    }
    member.last_sent = entry.version;
    member.last_sent_at = now;
    member.subscriber->Deliver(std::move(*batch));
  }
}

template <typename K>
void BasicFanout<K>::Publish(const std::vector<Entry> &entries,
                             absl::Time now) {
  absl::MutexLock lock(&mu_);
  for (const Entry& entry : entries) {
    if (entry.version <= position_) continue;  // Read twice (a retried page).
    if (!members_.empty() && !entry.happened.empty()) HandOutLocked(entry, now);
    position_ = entry.version;
  }
}

template <typename K> bool BasicFanout<K>::SkipTo(int64_t version) {
  absl::MutexLock lock(&mu_);
  if (!members_.empty()) return false;
  position_ = std::max(position_, version);
  return true;
}

template <typename K>
void BasicFanout<K>::Rebase(const absl::Status &why, int64_t oldest) {
  absl::MutexLock lock(&mu_);
  for (auto it = members_.begin(); it != members_.end();) {
    if (it->second.last_sent >= oldest) {
      ++it;
      continue;
    }
    it->second.subscriber->Abandon(why);
    auto filed = index_.find(it->second.key);
    filed->second.erase(it->first);
    if (filed->second.empty()) index_.erase(filed);
    members_.erase(it++);
  }
  position_ = oldest;
}

template <typename K>
size_t BasicFanout<K>::BookmarksPerSweepLocked(absl::Duration since) const {
  const double share = absl::FDivDuration(std::min(since, bookmark_every_), bookmark_every_);
  return std::max<size_t>(64, static_cast<size_t>(2 * members_.size() * share));
}

template <typename K> void BasicFanout<K>::Bookmark(absl::Time now) {
  absl::MutexLock lock(&mu_);
  const absl::Duration since = now - last_sweep_;
  if (since < bookmark_every_ / kSweepsPerInterval) return;
  last_sweep_ = now;
  size_t budget = BookmarksPerSweepLocked(since);
  for (auto& [id, member] : members_) {
    if (budget == 0) break;
    if (member.last_sent >= position_ || now - member.last_sent_at < bookmark_every_) continue;
    member.last_sent = position_;
    member.last_sent_at = now;
    member.subscriber->Deliver(BasicBatch<K>{BatchKind::kBookmark, position_, {}, nullptr});
    --budget;
  }
}

template <typename K> int64_t BasicFanout<K>::position() const {
  absl::MutexLock lock(&mu_);
  return position_;
}

template <typename K> size_t BasicFanout<K>::size() const {
  absl::MutexLock lock(&mu_);
  return members_.size();
}

template class BasicFanout<WorkspaceKind>;
template class BasicFanout<NodeKind>;

}  // namespace wsched::watch
