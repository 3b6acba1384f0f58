#include "server/scheduler/mirror_feed_sink.h"

namespace wsched::scheduler {

absl::Status MirrorFeedSink::Apply(const std::vector<store::ChangeRecord>& records) {
  replica::ReplicaMirror::ReadPlan plan = mirror_->Plan(records);
  // Its own lock, never taken under the mirror's; on error the entries come again.
  if (absl::Status refreshed = credentials_->Refresh(plan.credential_nodes);
      !refreshed.ok()) {
    return refreshed;
  }
  if (!plan.catalog && plan.nodes.empty() && plan.workspaces.empty()) return absl::OkStatus();
  std::vector<std::string> node_names;
  for (const auto& [name, version] : plan.nodes) node_names.push_back(name);
  absl::StatusOr<replica::StateStore::Rows> rows = state_->Load(plan.catalog, node_names, plan.workspaces);
  if (!rows.ok()) return rows.status();
  // After the mirror's lock, only to keep it short: the accounting's lock
  // may be taken under it, never the reverse.
  for (const auto& name : mirror_->ApplyRows(*rows, plan)) usage_->ForgetNode(name);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> MirrorFeedSink::Reload() {
  absl::StatusOr<replica::StateStore::Everything> all = state_->LoadAll();
  if (!all.ok()) return all.status();
  // Read after the snapshot: a change between the two is in the feed
  // after the snapshot's position, and refreshing it again is harmless.
  if (absl::Status reloaded = credentials_->ReloadAll(); !reloaded.ok()) {
    return reloaded;
  }
  for (const auto& name : mirror_->Replace(*all)) usage_->ForgetNode(name);
  return all->position;
}

}  // namespace wsched::scheduler
