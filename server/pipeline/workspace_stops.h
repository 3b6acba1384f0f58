// Stopping a workspace: the guarded write, then the mirror (which notes
// the pool its capacity returned to, so the queue drain tries it). Used by
// StopWorkspace, by a Place call that restarts a lost workspace, and by
// the idle-GPU policy. No state of its own.
#ifndef WSCHED_SERVER_PIPELINE_WORKSPACE_STOPS_H_
#define WSCHED_SERVER_PIPELINE_WORKSPACE_STOPS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/core/usage.h"
#include "server/replica/replica_mirror.h"
#include "server/replica/stores.h"
#include "server/pipeline/workspace_views.h"
#include "server/store/types.h"

namespace wsched::pipeline {

class WorkspaceStops {
 public:
  // `attempts`: how often an unguarded stop is tried again when a
  // concurrent change refused it.
  WorkspaceStops(replica::PlacementStore* store, replica::ReplicaMirror* mirror,
                 WorkspaceViews* views, int attempts)
      : store_(store), mirror_(mirror), views_(views), attempts_(attempts) {}

  // A placed workspace leaves its usage record with `reason` (kStopped for
  // StopWorkspace, kIdle for the idle-GPU policy; InvalidArgument for a
  // reason only a node path may write). `expected_version` 0: whatever the
  // record's version (a stop always wins); otherwise only that version,
  // once (ABORTED when it moved on).
  absl::StatusOr<store::WorkspaceRow> Stop(const std::string& id,
                                           core::EndReason reason = core::EndReason::kStopped,
                                           int64_t expected_version = 0);
  // Stop, answered as a caller sees the workspace.
  absl::StatusOr<WorkspaceView> StopWorkspace(const std::string& id,
                                              core::EndReason reason = core::EndReason::kStopped);

 private:
  replica::PlacementStore* const store_;
  replica::ReplicaMirror* const mirror_;
  WorkspaceViews* const views_;
  const int attempts_;
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_WORKSPACE_STOPS_H_
