#include "server/watch/fanout.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace wsched::watch {
namespace {

// The keys a workspace described by `facts` may be filed under.
void KeysOf(const Facts& facts, absl::flat_hash_set<std::string>& keys) {
  if (!facts.state) return;
  if (!facts.node.empty()) keys.insert(absl::StrCat("node:", facts.node));
  keys.insert(absl::StrCat("project:", facts.project_id));
  if (!facts.pool.empty()) keys.insert(absl::StrCat("pool:", facts.pool));
  keys.insert(absl::StrCat("class:", facts.class_id));
  keys.insert(absl::StrCat("org:", facts.org_id));
}

}  // namespace

std::string IndexKeyOf(const Filter& filter) {
  if (!filter.node.empty()) return absl::StrCat("node:", filter.node);
  if (!filter.project_id.empty()) return absl::StrCat("project:", filter.project_id);
  if (!filter.pool.empty()) return absl::StrCat("pool:", filter.pool);
  if (!filter.class_id.empty()) return absl::StrCat("class:", filter.class_id);
  if (!filter.org_id.empty()) return absl::StrCat("org:", filter.org_id);
  return "*";
}

Fanout::Joined Fanout::Join(Subscriber* subscriber, Filter filter, int64_t after, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (after < position_) return {std::nullopt, position_};
  const Id id = next_id_++;
  std::string key = IndexKeyOf(filter);
  index_[key].insert(id);
  members_.emplace(id, Member{subscriber, std::move(filter), std::move(key), after, now});
  return {id, position_};
}

void Fanout::Leave(Id id) {
  absl::MutexLock lock(&mu_);
  auto it = members_.find(id);
  if (it == members_.end()) return;
  auto filed = index_.find(it->second.key);
  filed->second.erase(id);
  if (filed->second.empty()) index_.erase(filed);
  members_.erase(it);
}

void Fanout::CandidatesLocked(const Happened& happened, absl::flat_hash_set<Id>& out) const {
  absl::flat_hash_set<std::string> keys = {"*"};
  KeysOf(happened.before, keys);
  if (happened.after) KeysOf(FactsOf(*happened.after), keys);
  for (const std::string& key : keys) {
    auto filed = index_.find(key);
    if (filed != index_.end()) out.insert(filed->second.begin(), filed->second.end());
  }
}

void Fanout::HandOutLocked(const Entry& entry, absl::Time now) {
  absl::flat_hash_set<Id> candidates;
  for (const auto& happened : entry.happened) CandidatesLocked(*happened, candidates);
  // The distinct batches of this entry: streams whose changes are the same
  // get copies of one, encoded once (EncodingMemo).
  std::vector<Batch> distinct;
  for (Id id : candidates) {
    Member& member = members_.at(id);
    if (entry.version <= member.last_sent) continue;  // It read this far itself.
    std::optional<Batch> batch = BatchFor(member.filter, entry);
    if (!batch) continue;
    auto same = std::find_if(distinct.begin(), distinct.end(),
                             [&](const Batch& seen) { return SameChanges(seen, *batch); });
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

void Fanout::Publish(const std::vector<Entry>& entries, absl::Time now) {
  absl::MutexLock lock(&mu_);
  for (const Entry& entry : entries) {
    if (entry.version <= position_) continue;  // Read twice (a retried page).
    if (!members_.empty() && !entry.happened.empty()) HandOutLocked(entry, now);
    position_ = entry.version;
  }
}

bool Fanout::SkipTo(int64_t version) {
  absl::MutexLock lock(&mu_);
  if (!members_.empty()) return false;
  position_ = std::max(position_, version);
  return true;
}

void Fanout::Rebase(const absl::Status& why, int64_t oldest) {
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

void Fanout::Bookmark(absl::Time now) {
  absl::MutexLock lock(&mu_);
  for (auto& [id, member] : members_) {
    if (member.last_sent >= position_ || now - member.last_sent_at < bookmark_every_) continue;
    member.last_sent = position_;
    member.last_sent_at = now;
    member.subscriber->Deliver(Batch{Batch::Kind::kBookmark, position_, {}, nullptr});
  }
}

int64_t Fanout::position() const {
  absl::MutexLock lock(&mu_);
  return position_;
}

size_t Fanout::size() const {
  absl::MutexLock lock(&mu_);
  return members_.size();
}

}  // namespace wsched::watch
