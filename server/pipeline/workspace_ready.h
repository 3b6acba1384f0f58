// A workspace's first ready report (ReportWorkspaceReady): the record is
// read, judged (core/ready_report.h) and, for the first report of a
// placement, written with its pool's first_ready sample in one small unit
// (replica::PlacementStore::RecordReady). Any replica takes it: it moves
// no capacity, so it needs neither the placer nor the group commit. No
// state of its own.
#ifndef WSCHED_SERVER_PIPELINE_WORKSPACE_READY_H_
#define WSCHED_SERVER_PIPELINE_WORKSPACE_READY_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/clock.h"
#include "server/pipeline/workspace_views.h"
#include "server/replica/stores.h"

namespace wsched::pipeline {

class WorkspaceReady {
 public:
  // `sampled` runs after a first_ready sample is recorded (the replica's
  // cached timings are stale then). `attempts`: how often a report is read
  // and tried again when a concurrent write moved the record on.
  WorkspaceReady(replica::PlacementStore* store, WorkspaceViews* views, core::Clock clock,
                 std::function<void()> sampled, int attempts)
      : store_(store),
        views_(views),
        clock_(std::move(clock)),
        sampled_(std::move(sampled)),
        attempts_(attempts) {}

  // Workspace `id` first became ready at `ready_time` (nullopt: now),
  // answered as a caller sees it. A second report of the same placement
  // answers the same and records nothing.
  absl::StatusOr<WorkspaceView> Report(const std::string& id,
                                       std::optional<absl::Time> ready_time);

 private:
  replica::PlacementStore* const store_;
  WorkspaceViews* const views_;
  const core::Clock clock_;
  const std::function<void()> sampled_;
  const int attempts_;
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_WORKSPACE_READY_H_
