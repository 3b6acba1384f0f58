#include "server/grpc/placement_service.h"

#include <optional>

#include <google/protobuf/util/time_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/convert/time_convert.h"
#include "server/core/paging.h"
#include "server/grpc/handler.h"
#include "server/grpc/placement_forwarder.h"
#include "server/grpc/watch_workspaces.h"
#include "server/grpc/workspace_message.h"
#include "server/scheduler/scheduler.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.PlacementService";

static_assert(v1::PendingReasonCode_MAX ==
                  static_cast<int>(placement::PendingCode::kBudgetExhausted) + 1,
              "v1.PendingReasonCode and placement::PendingCode must list the same codes");

// What a watcher is told again when it changes: the layer and what it names,
// not the detail text (which says "3m ago" and would change every second).
std::string PendingIdentity(const pipeline::WorkspaceView& view) {
  if (!view.pending) return "";
  const placement::PendingReason& r = *view.pending;
  return absl::StrCat(static_cast<int>(r.code), "/", r.pool, "/", r.node, "/", r.kernel, "/",
                      r.since ? absl::ToUnixSeconds(*r.since) : 0, "/",
                      r.until ? absl::ToUnixSeconds(*r.until) : 0, "/", r.queue_position);
}

// The held GPUs' health now (a slice's: its GPU's), from the node's latest
// report: a GPU can go bad long after the placement was stored.
void FillGpuHealth(const scheduler::Scheduler& scheduler, v1::Workspace* out) {
  if ((out->gpus_size() == 0 && !out->has_slice()) || out->node_name().empty()) return;
  auto health = scheduler.inventory().GpuHealthOn(out->node_name());
  auto fill = [&](v1::AssignedGpu& gpu) {
    auto it = health.find(gpu.uuid());
    if (it == health.end()) return;  // Node removed: the workspace says lost.
    gpu.set_health(it->second.healthy ? v1::GPU_HEALTH_HEALTHY : v1::GPU_HEALTH_UNHEALTHY);
    gpu.set_health_reason(it->second.reason);
  };
  for (v1::AssignedGpu& gpu : *out->mutable_gpus()) fill(gpu);
  if (out->has_slice()) fill(*out->mutable_slice()->mutable_gpu());
}

// What a watcher has seen of the GPUs' health, to send again when it changes.
std::string GpuHealthKey(const v1::Workspace& workspace) {
  std::string key;
  auto add = [&](const v1::AssignedGpu& gpu) {
    absl::StrAppend(&key, gpu.uuid(), "=", gpu.health(), ":", gpu.health_reason(), ";");
  };
  for (const v1::AssignedGpu& gpu : workspace.gpus()) add(gpu);
  if (workspace.has_slice()) add(workspace.slice().gpu());
  return key;
}

}  // namespace

PlacementServiceImpl::PlacementServiceImpl(const ServiceContext& context)
    : context_(context),
      watch_openings_(BlockingPool::Options{.max_threads = 16}),
      blocking_(BlockingPool::Options{}) {}

grpc::ServerWriteReactor<grpc::ByteBuffer>* PlacementServiceImpl::WatchWorkspaces(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return WorkspacesWatch::Start({&context_, &watch_openings_, context_.watch_buffer}, context,
                                request);
}

template <typename Request, typename Body>
grpc::ServerUnaryReactor* PlacementServiceImpl::Serve(
    grpc::CallbackServerContext* context, const char* method, const Request* request,
    v1::Workspace* response,
    void (PlacementForwarder::*forward)(const grpc::ServerContextBase&, const std::string&,
                                        const Request*, v1::Workspace*, PlacementForwarder::Done),
    Body body) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // The placer checks a forwarded call as its own (placement_forwarder.h).
  if (context_.forwarder != nullptr) {
    if (auto placer = context_.forwarder->TargetFor(*context)) {
      (context_.forwarder->*forward)(*context, *placer, request, response,
                                     [reactor](grpc::Status status) { reactor->Finish(status); });
      return reactor;
    }
  }
  blocking_.Submit([this, context, method, request, response, reactor, body = std::move(body)] {
    reactor->Finish(Handle(context_, context, kService, method, *request,
                           [&](const Principal&) -> absl::Status {
      absl::StatusOr<pipeline::WorkspaceView> view = body();
      if (!view.ok()) return view.status();
      return WorkspaceToProto(*view, response);
    }));
  });
  return reactor;
}

grpc::ServerUnaryReactor* PlacementServiceImpl::PlaceWorkspace(
    grpc::CallbackServerContext* context, const v1::PlaceWorkspaceRequest* request,
    v1::Workspace* response) {
  return Serve(context, "PlaceWorkspace", request, response, &PlacementForwarder::Place,
               [this, request] {
                 return context_.scheduler->pipeline().place().Place(
                     {request->workspace_id(), request->org_id(), request->project_id(),
                      request->user_id(), request->class_id(), request->restart(),
                      request->priority(), request->validate_only(), request->quote_token()});
               });
}

grpc::ServerUnaryReactor* PlacementServiceImpl::StopWorkspace(
    grpc::CallbackServerContext* context, const v1::StopWorkspaceRequest* request,
    v1::Workspace* response) {
  return Serve(context, "StopWorkspace", request, response, &PlacementForwarder::Stop,
               [this, request] { return context_.scheduler->pipeline().stops().StopWorkspace(request->workspace_id()); });
}

grpc::Status PlacementServiceImpl::GetWorkspace(grpc::ServerContext* context,
                                                const v1::GetWorkspaceRequest* request,
                                                v1::Workspace* response) {
  return Handle(context_, context, kService, "GetWorkspace", *request,
                [&](const Principal& caller) -> absl::Status {
    // Fixes cost up to 48 pending walks: only for a reader that asks (AIP-157).
    const bool with_fixes = request->view() == v1::WORKSPACE_VIEW_FULL;
    auto view = context_.scheduler->pipeline().views().Get(request->workspace_id(), with_fixes);
    if (!view.ok()) return view.status();
    if (absl::Status s = WorkspaceToProto(*view, response); !s.ok()) return s;
    FixesToProto(*view, caller, response);
    FillGpuHealth(*context_.scheduler, response);
    return absl::OkStatus();
  });
}

grpc::Status PlacementServiceImpl::ReportWorkspaceReady(
    grpc::ServerContext* context, const v1::ReportWorkspaceReadyRequest* request,
    v1::Workspace* response) {
  return Handle(context_, context, kService, "ReportWorkspaceReady", *request,
                [&](const Principal&) -> absl::Status {
    std::optional<absl::Time> ready_time;
    if (request->has_ready_time()) {
      // Judged as it is stored: to the microsecond.
      ready_time = absl::FromUnixMicros(
          absl::ToUnixMicros(convert::TimeFromProto(request->ready_time())));
    }
    auto view =
        context_.scheduler->pipeline().ready().Report(request->workspace_id(), ready_time);
    if (!view.ok()) return view.status();
    if (absl::Status s = WorkspaceToProto(*view, response); !s.ok()) return s;
    FillGpuHealth(*context_.scheduler, response);
    return absl::OkStatus();
  });
}

grpc::Status PlacementServiceImpl::ListWorkspaces(grpc::ServerContext* context,
                                                  const v1::ListWorkspacesRequest* request,
                                                  v1::ListWorkspacesResponse* response) {
  return Handle(context_, context, kService, "ListWorkspaces", *request,
                [&](const Principal&) -> absl::Status {
    store::WorkspaceFilter filter{request->node_name(), request->pool(), ""};
    if (request->state() != v1::WORKSPACE_STATE_UNSPECIFIED) {
      filter.state = absl::AsciiStrToLower(v1::WorkspaceState_Name(request->state()).substr(16));
    }
    // Length-prefixed, so no filter value can imitate another filter.
    auto page = core::ReadPageRequest(
        request->page_size(), request->page_token(),
        absl::StrCat(filter.node.size(), ":", filter.node, filter.pool.size(), ":", filter.pool,
                     filter.state));
    if (!page.ok()) return page.status();
    auto views = context_.scheduler->pipeline().views().List(filter, *page);
    if (!views.ok()) return views.status();
    for (const auto& view : views->items) {
      v1::Workspace* out = response->add_workspaces();
      if (absl::Status s = WorkspaceToProto(view, out); !s.ok()) return s;
      FillGpuHealth(*context_.scheduler, out);
    }
    response->set_next_page_token(views->next_page_token);
    return absl::OkStatus();
  });
}

grpc::Status PlacementServiceImpl::WatchWorkspace(grpc::ServerContext* context,
                                                  const v1::WatchWorkspaceRequest* request,
                                                  grpc::ServerWriter<v1::Workspace>* writer) {
  return Handle(context_, context, kService, "WatchWorkspace", *request,
                [&](const Principal&) -> absl::Status {
    int64_t seen = -1;
    std::string seen_health;  // GPU health changes without a new version.
    std::optional<pipeline::WorkspaceView> last;  // Read again only when it changed.
    while (!context->IsCancelled() && !context_.scheduler->stopping()) {
      auto view = context_.scheduler->pipeline().views().Refresh(request->workspace_id(),
                                                       last ? &*last : nullptr);
      if (!view.ok()) return view.status();
      last = *view;
      v1::Workspace out;
      if (absl::Status s = WorkspaceToProto(*view, &out); !s.ok()) return s;
      FillGpuHealth(*context_.scheduler, &out);
      // A pending workspace's reason also changes without a write (a node
      // comes up, a pool backs off).
      std::string health = absl::StrCat(GpuHealthKey(out), "|", PendingIdentity(*view));
      if (view->version != seen || health != seen_health) {
        if (!writer->Write(out)) return absl::OkStatus();  // Client went away.
        seen = view->version;
        seen_health = std::move(health);
        if (view->workspace.state == core::WorkspaceState::kStopped) return absl::OkStatus();
      }
      // Wakes on a change, or every second to notice cancellation.
      context_.scheduler->WaitForChange(request->workspace_id(), seen, absl::Seconds(1));
    }
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
