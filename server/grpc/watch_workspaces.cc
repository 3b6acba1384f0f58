#include "server/grpc/watch_workspaces.h"

#include <optional>
#include <string>
#include <vector>

#include "server/core/error_reason.h"
#include "server/grpc/node_identity.h"
#include "server/grpc/workspace_message.h"

namespace wsched::grpc_api {
namespace {

std::optional<core::WorkspaceState> StateOf(v1::WorkspaceState state) {
  switch (state) {
    case v1::WORKSPACE_STATE_PENDING: return core::WorkspaceState::kPending;
    case v1::WORKSPACE_STATE_PLACED: return core::WorkspaceState::kPlaced;
    case v1::WORKSPACE_STATE_STOPPED: return core::WorkspaceState::kStopped;
    case v1::WORKSPACE_STATE_LOST: return core::WorkspaceState::kLost;
    default: return std::nullopt;
  }
}

v1::WorkspaceChange::What WhatToProto(watch::What what) {
  switch (what) {
  case watch::What::kExisting:
    return v1::WorkspaceChange::WHAT_EXISTING;
  case watch::What::kPending:
    return v1::WorkspaceChange::WHAT_PENDING;
  case watch::What::kPlaced:
    return v1::WorkspaceChange::WHAT_PLACED;
  case watch::What::kStopped:
    return v1::WorkspaceChange::WHAT_STOPPED;
  case watch::What::kLost:
    return v1::WorkspaceChange::WHAT_LOST;
  case watch::What::kIdleChanged:
    return v1::WorkspaceChange::WHAT_IDLE_CHANGED;
  case watch::What::kDeleted:
    return v1::WorkspaceChange::WHAT_DELETED;
  }
  return v1::WorkspaceChange::WHAT_UNSPECIFIED;
}

} // namespace

// The request's filter, narrowed to what the caller may see: a project
// owner its orgs and projects, a node's agent its own node.
absl::StatusOr<watch::Filter>
WorkspaceStreamFace::FilterFor(const Principal &who, const Request &request,
                               metrics::Metrics *metrics) {
  const v1::WorkspaceWatchFilter &in = request.filter();
  watch::Filter filter{in.org_id(), in.project_id(), in.class_id(), in.pool(), in.node_name(),
                       {}, std::nullopt, std::nullopt};
  for (int state : in.states()) {
    if (auto s = StateOf(static_cast<v1::WorkspaceState>(state))) filter.states.insert(*s);
  }
  if (who.Has(Role::kAdmin) || who.Has(Role::kControlPlane)) return filter;
  if (who.Has(Role::kProjectOwner)) {
    // As Principal::CoversProject: its projects when it names any, else
    // every project of its orgs.
    if (who.projects.empty()) {
      filter.scope_orgs = std::vector<std::string>(who.orgs.begin(), who.orgs.end());
    } else {
      filter.scope_projects = std::vector<std::string>(who.projects.begin(), who.projects.end());
    }
    return filter;
  }
  // An agent: the workspaces placed on the node it speaks for.
  if (filter.node.empty()) {
    return core::InvalidFieldError("filter.node_name",
                                   "a node's agent watches the workspaces of its own node: set it "
                                   "to that node");
  }
  if (absl::Status s = CheckSpeaksForNode(who, filter.node, "WatchWorkspaces", metrics); !s.ok()) {
    return s;
  }
  return filter;
}

void WorkspaceStreamFace::ChangeToProto(const watch::Change &change,
                                        int64_t version,
                                        v1::WorkspaceChange *out) {
  const watch::Happened& happened = *change.happened;
  out->set_what(WhatToProto(change.what));
  out->set_version(version);
  out->set_workspace_version(happened.version);
  out->set_left_filter(change.left_filter);
  v1::Workspace* workspace = out->mutable_workspace();
  if (happened.after) {
    pipeline::WorkspaceView view;
    view.workspace = *happened.after;
    view.version = happened.version;
    // A hand-off that cannot be mapped leaves the device spec out; the
    // state and where it runs still go.
    (void)WorkspaceToProto(view, workspace);
    return;
  }
  // Deleted: what is known of it is what it was.
  workspace->set_id(happened.id);
  workspace->set_org_id(happened.before.org_id);
  workspace->set_project_id(happened.before.project_id);
  workspace->set_class_id(happened.before.class_id);
  if (happened.before.state) workspace->set_state(StateToProto(*happened.before.state));
}

template class WatchStream<WorkspaceStreamFace>;

}  // namespace wsched::grpc_api
