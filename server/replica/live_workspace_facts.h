// What the replica keeps of each live workspace for the parts beside the
// placement pipeline: its class (what GPU usage is charged to), its idle
// mark (idle_monitor.h) and, while placed, since when (held GPU time is
// charged from it). A value kept under the replica mirror's lock
// (replica_mirror.h), which tells it of every row it applies: no lock of
// its own.
#ifndef WSCHED_SERVER_REPLICA_LIVE_WORKSPACE_FACTS_H_
#define WSCHED_SERVER_REPLICA_LIVE_WORKSPACE_FACTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "server/core/idle_policy.h"
#include "server/store/types.h"

namespace wsched::replica {

class LiveWorkspaceFacts {
 public:
  // A live workspace marked idle, with what a pending workspace's fixes
  // need to offer its stop (placement::IdleWorkspace).
  struct Idle {
    core::IdleMark mark;
    std::string org_id;
    std::string project_id;
    int64_t gpu_sevenths = 0;  // core::HeldGpuSevenths.
  };

  // `row` is the newest picture of its workspace. Returns when the
  // placement it replaces began, when that placement ended with it (the
  // usage accounting is told).
  std::optional<absl::Time> Apply(const store::WorkspaceRow& row, bool live);
  void Clear();

  std::string ClassOf(const std::string& id) const;  // "unknown" when not live.
  std::optional<core::IdleMark> IdleMarkOf(const std::string& id) const;
  absl::Time PlacedAt(const std::string& id) const;  // InfinitePast when not placed.
  const absl::flat_hash_map<std::string, Idle>& idle() const { return idle_; }
  size_t classes() const { return class_of_.size(); }

 private:
  absl::flat_hash_map<std::string, std::string> class_of_;
  absl::flat_hash_map<std::string, Idle> idle_;
  absl::flat_hash_map<std::string, absl::Time> placed_at_;
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_LIVE_WORKSPACE_FACTS_H_
