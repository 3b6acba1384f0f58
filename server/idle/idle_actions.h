// The idle-GPU policy's window on one replica (idle_monitor.h): what the
// mirror knows of the workspaces it judges, the mark written on the
// record, and the guarded stop. No state of its own.
#ifndef WSCHED_SERVER_IDLE_IDLE_ACTIONS_H_
#define WSCHED_SERVER_IDLE_IDLE_ACTIONS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/replica/feed_follower.h"
#include "server/idle/idle_monitor.h"
#include "server/replica/replica_mirror.h"
#include "server/pipeline/workspace_stops.h"
#include "server/store/database.h"

namespace wsched::idle {

class IdleActions : public IdleMonitor::Actions {
 public:
  // Without `db` (unit tests) marks are refused.
  IdleActions(store::Database* db, replica::ReplicaMirror* mirror, replica::FeedFollower* follower,
              pipeline::WorkspaceStops* stops)
      : db_(db), mirror_(mirror), follower_(follower), stops_(stops) {}
  std::shared_ptr<const core::Catalog> Catalog() const override {
    return mirror_->CatalogNow().first;
  }
  absl::flat_hash_map<std::string, Known> KnownOf(const std::vector<std::string>& ids) override;
  absl::StatusOr<int64_t> Mark(const std::string& workspace, int64_t version,
                               const std::optional<core::IdleMark>& mark) override;
  // Only at exactly `version` (ABORTED when it moved on): the stop path, guarded.
  absl::Status StopIdle(const std::string& workspace, int64_t version) override {
    return stops_->Stop(workspace, core::EndReason::kIdle, version).status();
  }

 private:
  store::Database* const db_;
  replica::ReplicaMirror* const mirror_;
  replica::FeedFollower* const follower_;
  pipeline::WorkspaceStops* const stops_;
};

}  // namespace wsched::idle

#endif  // WSCHED_SERVER_IDLE_IDLE_ACTIONS_H_
