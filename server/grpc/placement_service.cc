#include "server/grpc/placement_service.h"

#include <google/protobuf/util/time_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/grpc/handler.h"
#include "server/scheduler/scheduler.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.PlacementService";
using google::protobuf::util::TimeUtil;

v1::WorkspaceState ToProto(core::WorkspaceState state) {
  switch (state) {
    case core::WorkspaceState::kPending: return v1::WORKSPACE_STATE_PENDING;
    case core::WorkspaceState::kPlaced: return v1::WORKSPACE_STATE_PLACED;
    case core::WorkspaceState::kStopped: return v1::WORKSPACE_STATE_STOPPED;
    case core::WorkspaceState::kLost: return v1::WORKSPACE_STATE_LOST;
  }
  return v1::WORKSPACE_STATE_UNSPECIFIED;
}

v1::ClassSource SourceFromName(const std::string& name) {
  for (auto source : {core::ClassSource::kRequest, core::ClassSource::kPrevious,
                      core::ClassSource::kProjectDefault, core::ClassSource::kOrgDefault,
                      core::ClassSource::kInstallationDefault}) {
    if (name == core::ClassSourceName(source)) return static_cast<v1::ClassSource>(static_cast<int>(source) + 1);
  }
  return v1::CLASS_SOURCE_UNSPECIFIED;
}

absl::Status ToProto(const scheduler::WorkspaceView& view, v1::Workspace* out) {
  const core::Workspace& w = view.workspace;
  if (!view.placement_binary.empty()) {
    if (!out->ParseFromString(view.placement_binary)) {
      return absl::InternalError("placement of " + w.id + " does not parse");
    }
  } else if (!w.placement_json.empty() && w.state != core::WorkspaceState::kStopped) {
    if (absl::Status s = convert::FromJson(w.placement_json, out); !s.ok()) return s;
  }
  out->set_id(w.id);
  out->set_org_id(w.org_id);
  out->set_project_id(w.project_id);
  out->set_user_id(w.user_id);
  out->set_class_id(w.class_id);
  out->set_class_explanation(w.explanation);
  out->set_class_source(SourceFromName(w.class_source));
  out->set_state(ToProto(w.state));
  if (w.state == core::WorkspaceState::kPlaced || w.state == core::WorkspaceState::kLost) {
    out->set_node_name(w.node_name);
    out->set_pool(w.pool);
  }
  out->set_pending_reason(w.pending_reason);
  out->set_queue_position(view.queue_position);
  if (view.estimated_wait) out->set_estimated_seconds_to_place(absl::ToInt64Seconds(*view.estimated_wait));
  if (w.created_at != absl::InfinitePast()) {
    *out->mutable_created_at() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(w.created_at));
  }
  if (w.placed_at != absl::InfinitePast()) {
    *out->mutable_placed_at() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(w.placed_at));
  }
  return absl::OkStatus();
}

}  // namespace

grpc::Status PlacementServiceImpl::PlaceWorkspace(grpc::ServerContext* context,
                                                  const v1::PlaceWorkspaceRequest* request,
                                                  v1::Workspace* response) {
  return Handle(context_, context, kService, "PlaceWorkspace", *request,
                [&](const Principal&) -> absl::Status {
    auto view = context_.scheduler->Place({request->workspace_id(), request->org_id(),
                                           request->project_id(), request->user_id(),
                                           request->class_id(), request->restart(),
                                           request->priority()});
    if (!view.ok()) return view.status();
    return ToProto(*view, response);
  });
}

grpc::Status PlacementServiceImpl::StopWorkspace(grpc::ServerContext* context,
                                                 const v1::StopWorkspaceRequest* request,
                                                 v1::Workspace* response) {
  return Handle(context_, context, kService, "StopWorkspace", *request,
                [&](const Principal&) -> absl::Status {
    auto view = context_.scheduler->StopWorkspace(request->workspace_id());
    if (!view.ok()) return view.status();
    return ToProto(*view, response);
  });
}

grpc::Status PlacementServiceImpl::GetWorkspace(grpc::ServerContext* context,
                                                const v1::GetWorkspaceRequest* request,
                                                v1::Workspace* response) {
  return Handle(context_, context, kService, "GetWorkspace", *request,
                [&](const Principal&) -> absl::Status {
    auto view = context_.scheduler->GetWorkspace(request->workspace_id());
    if (!view.ok()) return view.status();
    return ToProto(*view, response);
  });
}

grpc::Status PlacementServiceImpl::ListWorkspaces(grpc::ServerContext* context,
                                                  const v1::ListWorkspacesRequest* request,
                                                  v1::ListWorkspacesResponse* response) {
  return Handle(context_, context, kService, "ListWorkspaces", *request,
                [&](const Principal&) -> absl::Status {
    std::string state;
    if (request->state() != v1::WORKSPACE_STATE_UNSPECIFIED) {
      state = absl::AsciiStrToLower(v1::WorkspaceState_Name(request->state()).substr(16));
    }
    auto views = context_.scheduler->ListWorkspaces(request->node_name(), request->pool(), state);
    if (!views.ok()) return views.status();
    for (const auto& view : *views) {
      if (absl::Status s = ToProto(view, response->add_workspaces()); !s.ok()) return s;
    }
    return absl::OkStatus();
  });
}

grpc::Status PlacementServiceImpl::WatchWorkspace(grpc::ServerContext* context,
                                                  const v1::WatchWorkspaceRequest* request,
                                                  grpc::ServerWriter<v1::Workspace>* writer) {
  return Handle(context_, context, kService, "WatchWorkspace", *request,
                [&](const Principal&) -> absl::Status {
    int64_t seen = -1;
    while (!context->IsCancelled() && !context_.scheduler->stopping()) {
      auto view = context_.scheduler->GetWorkspace(request->workspace_id());
      if (!view.ok()) return view.status();
      if (view->version != seen) {
        v1::Workspace out;
        if (absl::Status s = ToProto(*view, &out); !s.ok()) return s;
        if (!writer->Write(out)) return absl::OkStatus();  // Client went away.
        seen = view->version;
        if (view->workspace.state == core::WorkspaceState::kStopped) return absl::OkStatus();
      }
      // Wakes on a change, or every second to notice cancellation.
      context_.scheduler->WaitForChange(request->workspace_id(), seen,
                                        absl::Now() + absl::Seconds(1));
    }
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
