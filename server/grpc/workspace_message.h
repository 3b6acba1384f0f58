// A workspace as the API shows it: one mapping for GetWorkspace,
// ListWorkspaces, the watch streams and the placement answers.
#ifndef WSCHED_SERVER_GRPC_WORKSPACE_MESSAGE_H_
#define WSCHED_SERVER_GRPC_WORKSPACE_MESSAGE_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/core/workspace.h"
#include "server/grpc/principal.h"
#include "server/pipeline/workspace_views.h"
#include "wsched/v1/placement.pb.h"

namespace wsched::grpc_api {

v1::WorkspaceState StateToProto(core::WorkspaceState state);
google::protobuf::Timestamp TimestampOf(absl::Time t);
void PendingToProto(const placement::PendingReason& reason, v1::PendingReason* out);
// Fails only when the stored hand-off cannot be mapped.
absl::Status WorkspaceToProto(const pipeline::WorkspaceView& view, v1::Workspace* out);

// Whether `caller` may apply `fix` (its applier says who may) to workspace
// `w`: an admin every fix; the control plane (placing for the project's
// users) and an owner of the workspace's project the fixes that change
// only the workspace, or stop an idle workspace of the same project (an
// owner must cover the fix's project_id too). The org's settings, the
// nodes and the catalog's pools are changed, and another project's
// workspace stopped for this one, by admins only (SetOrgSettings,
// UncordonNode, ApplyCatalog), so an org admin's fixes are shown to admins.
bool MayApplyFix(const Principal& caller, const core::Workspace& w,
                 const placement::PendingFix& fix);
// The view's fixes that `caller` may apply, in their order, as
// Workspace.fixes.
void FixesToProto(const pipeline::WorkspaceView& view, const Principal& caller, v1::Workspace* out);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_WORKSPACE_MESSAGE_H_
