// WatchWorkspaces (docs/api.md "Following every workspace"): the workspace
// face of a watch stream (watch_stream.h). Admins and the control plane
// follow every workspace, a project owner those of its orgs or projects,
// a node's agent those of the node it speaks for.
#ifndef WSCHED_SERVER_GRPC_WATCH_WORKSPACES_H_
#define WSCHED_SERVER_GRPC_WATCH_WORKSPACES_H_

#include "absl/status/statusor.h"
#include "server/grpc/principal.h"
#include "server/grpc/watch_stream.h"
#include "server/metrics/metrics.h"
#include "server/watch/change.h"
#include "wsched/v1/placement.pb.h"

namespace wsched::grpc_api {

struct WorkspaceStreamFace {
  using Kind = watch::WorkspaceKind;
  using Request = v1::WatchWorkspacesRequest;
  using Response = v1::WatchWorkspacesResponse;
  static constexpr char kMethod[] =
      "/wsched.v1.PlacementService/WatchWorkspaces";

  static absl::StatusOr<watch::Filter> FilterFor(const Principal &who,
                                                 const Request &request,
                                                 metrics::Metrics *metrics);
  static void ChangeToProto(const watch::Change &change, int64_t version,
                            v1::WorkspaceChange *out);
  static watch::Fanout &FanoutOf(scheduler::Scheduler &scheduler) {
    return scheduler.workspace_fanout();
  }
  static watch::HistorySource &HistoryOf(scheduler::Scheduler &scheduler) {
    return scheduler.workspace_history();
  }
};

extern template class WatchStream<WorkspaceStreamFace>;
using WorkspacesWatch = WatchStream<WorkspaceStreamFace>;

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_WATCH_WORKSPACES_H_
