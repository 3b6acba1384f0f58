#include "server/grpc/inventory_service.h"

#include <algorithm>

#include <google/protobuf/util/time_util.h>

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/core/error_reason.h"
#include "server/core/paging.h"
#include "server/core/validation.h"
#include "server/grpc/handler.h"
#include "server/grpc/node_identity.h"
#include "server/grpc/node_message.h"
#include "server/grpc/token_hash.h"
#include "server/grpc/watch_nodes.h"
#include "server/scheduler/scheduler.h"

namespace wsched::grpc_api {
InventoryServiceImpl::InventoryServiceImpl(const ServiceContext &context)
    : context_(context),
      watch_openings_(BlockingPool::Options{.max_threads = 4}) {}

namespace {

constexpr char kService[] = "wsched.v1.InventoryService";
using google::protobuf::util::TimeUtil;

google::protobuf::Duration ToDuration(absl::Duration d) {
  return TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(d));
}

// The seconds fields stay filled until v2 for the clients that read them;
// their accessors are deprecated for readers, not for this one writer.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void SetDeprecatedSeconds(const store::TimingFigures& figures, const std::string& pool,
                          const scheduler::SchedulerOptions& options, v1::PoolTimings* out) {
  if (auto it = figures.node_start.find(pool); it != figures.node_start.end()) {
    out->set_node_start_median_seconds(absl::ToInt64Seconds(it->second.median));
  }
  out->set_default_node_start_seconds(absl::ToInt64Seconds(options.default_node_start));
  out->set_default_driver_install_seconds(absl::ToInt64Seconds(options.default_driver_install));
  for (v1::KernelTiming& install : *out->mutable_driver_installs()) {
    install.set_median_seconds(install.median().seconds());
  }
}

void SetDeprecatedSeconds(absl::Duration heartbeat_interval, v1::RegisterNodeResponse* out) {
  out->set_heartbeat_interval_seconds(static_cast<int32_t>(absl::ToInt64Seconds(heartbeat_interval)));
}
#pragma GCC diagnostic pop

absl::Status NotYourPool(const Principal& who, const std::string& pool) {
  return core::ReasonError(
      absl::StrCat(who.name, " may only report nodes of its pools, not pool ", pool),
      {.reason = core::ErrorReason::kOutsideTokenScope,
       .metadata = {{"principal", who.name}, {"pool", pool}}});
}

// An agent speaks only for its own node (node identity) and, when its
// credential is scoped to pools, only for nodes of those pools.
absl::Status CheckReportsFor(const Principal& who, const std::string& node_name,
                             const char* method, metrics::Metrics* metrics,
                             inventory::NodeInventory& inventory) {
  if (absl::Status s = CheckSpeaksForNode(who, node_name, method, metrics); !s.ok()) return s;
  // The scope check needs the node's pool: read it first for scoped agents.
  if (!who.Has(Role::kAdmin) && !who.pools.empty()) {
    auto node = inventory.GetNode(node_name);
    if (node.ok() && !who.CoversPool(node->node.info.pool)) {
      return NotYourPool(who, node->node.info.pool);
    }
  }
  return absl::OkStatus();
}

v1::DriverCache ToProto(core::DriverCache cache) {
  switch (cache) {
    case core::DriverCache::kHit: return v1::DRIVER_CACHE_HIT;
    case core::DriverCache::kMiss: return v1::DRIVER_CACHE_MISS;
    case core::DriverCache::kUnknown: return v1::DRIVER_CACHE_UNSPECIFIED;
  }
  return v1::DRIVER_CACHE_UNSPECIFIED;
}

void TimingsToProto(const std::string& pool, const store::TimingFigures& figures,
                    const scheduler::SchedulerOptions& options, v1::PoolTimings* out) {
  if (auto it = figures.node_start.find(pool); it != figures.node_start.end()) {
    *out->mutable_node_start_median() = ToDuration(it->second.median);
    out->set_node_start_samples(it->second.samples);
  }
  *out->mutable_default_node_start() = ToDuration(options.default_node_start);
  for (const auto& [key, figure] : figures.driver_install_by_cache) {
    const auto& [of_pool, kernel, cache] = key;
    if (of_pool != pool) continue;
    v1::KernelTiming* install = out->add_driver_installs();
    install->set_kernel_version(kernel);
    *install->mutable_median() = ToDuration(figure.median);
    install->set_samples(figure.samples);
    install->set_cache(ToProto(cache));
  }
  *out->mutable_default_driver_install() = ToDuration(options.default_driver_install);
  SetDeprecatedSeconds(figures, pool, options, out);
}

inventory::DriverInstallReport DriverInstallReportOf(const v1::ReportDriverInstallRequest& request) {
  using Outcome = inventory::DriverInstallReport::Outcome;
  inventory::DriverInstallReport report;
  report.node = request.node_name();
  report.kernel = request.kernel_version();
  switch (request.outcome()) {
    case v1::DRIVER_INSTALL_OUTCOME_STARTED: report.outcome = Outcome::kStarted; break;
    case v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED: report.outcome = Outcome::kSucceeded; break;
    case v1::DRIVER_INSTALL_OUTCOME_FAILED: report.outcome = Outcome::kFailed; break;
    default: report.outcome = request.success() ? Outcome::kSucceeded : Outcome::kFailed;
  }
  report.detail = request.detail();
  report.log_tail = request.log_tail();
  if (request.has_duration()) {
    report.took = absl::Seconds(request.duration().seconds()) +
                  absl::Nanoseconds(request.duration().nanos());
  }
  report.cache = request.cache() == v1::DRIVER_CACHE_HIT    ? core::DriverCache::kHit
                 : request.cache() == v1::DRIVER_CACHE_MISS ? core::DriverCache::kMiss
                                                            : core::DriverCache::kUnknown;
  return report;
}

void DriverRolloutToProto(const inventory::DriverRolloutView& view, v1::DriverRollout* out) {
  out->set_pool(view.pool);
  out->set_under_way(view.under_way);
  out->set_paused(view.record.paused);
  out->set_reason(view.record.reason);
  out->set_canary(view.record.canary);
  out->set_waiting_nodes(view.counts.waiting);
  out->set_in_flight_nodes(view.counts.in_flight);
  out->set_failed_nodes(view.counts.failed);
  out->set_max_unavailable(view.max_unavailable);
}

void DriverWorkToProto(const inventory::DriverWork& work, v1::DriverWork* out) {
  out->set_node_name(work.node_name);
  out->set_kernel_version(work.kernel_version);
  out->set_os_id(work.os_id);
  out->set_os_version(work.os_version);
  out->set_driver_version(work.driver_version);
  out->set_installer_image(work.installer_image);
}

void MigWorkToProto(const replica::ReplicaMirror::MigWork& work, v1::MigWork* out) {
  out->set_gpu_index(work.order.gpu_index);
  out->set_gpu_uuid(work.gpu_uuid);
  out->set_for_profile(work.order.for_profile);
  for (const placement::PlannedSlice& slice : work.order.layout) {
    v1::MigSlicePlacement* placed = out->add_slices();
    placed->set_profile(slice.profile);
    placed->set_start(slice.start);
  }
}

// GetNode and RemoveNode share NodeNameRequest with the guarded writes but
// take no version: refusing one beats silently ignoring it.
absl::Status NoVersionTaken(const v1::NodeNameRequest& request, const char* method) {
  if (request.expected_version() == 0) return absl::OkStatus();
  return core::InvalidFieldError("expected_version",
                                 absl::StrCat("must be 0: ", method, " takes no version"));
}

}  // namespace

grpc::Status InventoryServiceImpl::RegisterNode(grpc::ServerContext* context,
                                                const v1::RegisterNodeRequest* request,
                                                v1::RegisterNodeResponse* response) {
  return Handle(context_, context, kService, "RegisterNode", *request,
                [&](const Principal& who) -> absl::Status {
    core::NodeInfo info = convert::FromProto(request->node());
    auto issue = RegistrationCredential(who, info.name, request->node_token_sha256(),
                                        context_.metrics);
    if (!issue.ok()) return issue.status();
    if (!who.CoversPool(info.pool)) return NotYourPool(who, info.pool);
    auto view = inventory().RegisterNode(info, issue->has_value() ? &**issue : nullptr);
    if (!view.ok()) return CountedNodeIdentityRefusal(view.status(), context_.metrics);
    NodeToProto(*view, response->mutable_node());
    if (auto work = inventory().AgentDriverWork(view->node)) {
      DriverWorkToProto(*work, response->mutable_driver_work());
    }
    if (auto work = context_.scheduler->mirror().MigWorkFor(info.name)) {
      MigWorkToProto(*work, response->mutable_mig_work());
    }
    response->set_node_credential_issued(issue->has_value());
    *response->mutable_heartbeat_interval() = ToDuration(context_.heartbeat_interval);
    SetDeprecatedSeconds(context_.heartbeat_interval, response);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::Heartbeat(grpc::ServerContext* context,
                                             const v1::HeartbeatRequest* request,
                                             v1::HeartbeatResponse* response) {
  return Handle(context_, context, kService, "Heartbeat", *request,
                [&](const Principal& who) -> absl::Status {
    inventory::HeartbeatInput input;
    input.node_name = request->node_name();
    input.kernel_version = request->kernel_version();
    input.driver_version = request->driver_version();
    for (const auto& [uuid, health] : request->gpu_health_by_uuid()) {
      input.gpu_healthy_by_uuid[uuid] = health != v1::GPU_HEALTH_UNHEALTHY;
    }
    for (const auto& [uuid, reason] : request->gpu_health_reason_by_uuid()) {
      input.gpu_health_reason_by_uuid[uuid] = reason;
    }
    for (int i = 0; i < request->gpu_usage_size(); ++i) {
      const auto& usage = request->gpu_usage(i);
      input.usage.push_back({usage.uuid(), usage.utilization_percent(), usage.memory_used_bytes()});
    }
    if (absl::Status s = CheckReportsFor(who, input.node_name, "Heartbeat", context_.metrics,
                                         inventory());
        !s.ok()) {
      return s;
    }
    auto result = inventory().Heartbeat(input);
    if (!result.ok()) return result.status();
    response->set_reregister(result->reregister);
    response->set_state(NodeStateToProto(result->state));
    if (result->driver_work) DriverWorkToProto(*result->driver_work, response->mutable_driver_work());
    if (!result->reregister) {
      if (auto work = context_.scheduler->mirror().MigWorkFor(input.node_name)) {
        MigWorkToProto(*work, response->mutable_mig_work());
      }
    }
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::SetState(grpc::ServerContext* context, const char* method,
                                            const v1::NodeNameRequest* request,
                                            core::NodeState state, v1::Node* response) {
  return Handle(context_, context, kService, method, *request,
                [&](const Principal&) -> absl::Status {
    auto view = inventory().SetNodeAdminState(request->node_name(), state,
                                                      request->expected_version());
    if (!view.ok()) return view.status();
    NodeToProto(*view, response);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::CordonNode(grpc::ServerContext* context,
                                              const v1::NodeNameRequest* request,
                                              v1::Node* response) {
  return SetState(context, "CordonNode", request, core::NodeState::kCordoned, response);
}

grpc::Status InventoryServiceImpl::DrainNode(grpc::ServerContext* context,
                                             const v1::NodeNameRequest* request,
                                             v1::Node* response) {
  return SetState(context, "DrainNode", request, core::NodeState::kDraining, response);
}

grpc::Status InventoryServiceImpl::UncordonNode(grpc::ServerContext* context,
                                                const v1::NodeNameRequest* request,
                                                v1::Node* response) {
  return SetState(context, "UncordonNode", request, core::NodeState::kReady, response);
}

grpc::Status InventoryServiceImpl::RemoveNode(grpc::ServerContext* context,
                                              const v1::NodeNameRequest* request,
                                              v1::Empty* response) {
  return Handle(context_, context, kService, "RemoveNode", *request,
                [&](const Principal&) -> absl::Status {
    if (absl::Status s = NoVersionTaken(*request, "RemoveNode"); !s.ok()) return s;
    return inventory().RemoveNode(request->node_name());
  });
}

grpc::Status InventoryServiceImpl::GetNode(grpc::ServerContext* context,
                                           const v1::NodeNameRequest* request,
                                           v1::Node* response) {
  return Handle(context_, context, kService, "GetNode", *request,
                [&](const Principal& who) -> absl::Status {
    if (absl::Status s = NoVersionTaken(*request, "GetNode"); !s.ok()) return s;
    if (absl::Status s =
            CheckSpeaksForNode(who, request->node_name(), "GetNode", context_.metrics);
        !s.ok()) {
      return s;
    }
    auto view = inventory().GetNode(request->node_name());
    if (!view.ok()) return view.status();
    if (!who.CoversPool(view->node.info.pool)) return NotYourPool(who, view->node.info.pool);
    NodeToProto(*view, response);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::ListNodes(grpc::ServerContext* context,
                                             const v1::ListNodesRequest* request,
                                             v1::ListNodesResponse* response) {
  return Handle(context_, context, kService, "ListNodes", *request,
                [&](const Principal&) -> absl::Status {
    auto page = core::ReadPageRequest(request->page_size(), request->page_token(),
                                      absl::StrCat("pool=", request->pool()));
    if (!page.ok()) return page.status();
    auto views = inventory().ListNodes(request->pool(), *page);
    if (!views.ok()) return views.status();
    for (const auto &view : views->items)
      NodeToProto(view, response->add_nodes());
    response->set_next_page_token(views->next_page_token);
    return absl::OkStatus();
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer> *
InventoryServiceImpl::WatchNodes(grpc::CallbackServerContext *context,
                                 const grpc::ByteBuffer *request) {
  return NodesWatch::Start({&context_, &watch_openings_, context_.watch_buffer},
                           context, request);
}

grpc::Status InventoryServiceImpl::ListPools(grpc::ServerContext* context,
                                             const v1::ListPoolsRequest* request,
                                             v1::ListPoolsResponse* response) {
  return Handle(context_, context, kService, "ListPools", *request,
                [&](const Principal&) -> absl::Status {
    auto page = core::ReadPageRequest(request->page_size(), request->page_token(), "");
    if (!page.ok()) return page.status();
    auto pools = inventory().ListPools();
    if (!pools.ok()) return pools.status();
    const store::TimingFigures timings = inventory().Timings();
    std::sort(pools->begin(), pools->end(),
              [](const inventory::PoolView& a, const inventory::PoolView& b) {
                return a.pool.id < b.pool.id;
              });
    std::string next_page_token;
    for (const auto& view : core::PageOf(
             *pools, *page, [](const inventory::PoolView& v) { return v.pool.id; },
             &next_page_token)) {
      v1::Pool* out = response->add_pools();
      *out = convert::ToProto(view.pool);
      out->set_version(view.pool.version);
      for (const auto& [state, count] : view.nodes_by_state) (*out->mutable_nodes_by_state())[state] = count;
      out->set_gpus_total(view.gpus_total);
      out->set_gpus_held(view.gpus_held);
      out->set_gpus_unhealthy(view.gpus_unhealthy);
      TimingsToProto(view.pool.id, timings, context_.scheduler->options(), out->mutable_timings());
    }
    response->set_next_page_token(next_page_token);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::ListDriverWork(grpc::ServerContext* context,
                                                  const v1::ListDriverWorkRequest* request,
                                                  v1::ListDriverWorkResponse* response) {
  return Handle(context_, context, kService, "ListDriverWork", *request,
                [&](const Principal&) -> absl::Status {
    auto page = core::ReadPageRequest(request->page_size(), request->page_token(), "");
    if (!page.ok()) return page.status();
    auto work = inventory().ListDriverWork(*page);
    if (!work.ok()) return work.status();
    for (const auto& item : work->work) DriverWorkToProto(item, response->add_work());
    for (const auto& name : work->nodes_without_policy) response->add_nodes_without_policy(name);
    response->set_next_page_token(work->next_page_token);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::ListDriverRollouts(grpc::ServerContext* context,
                                                      const v1::ListDriverRolloutsRequest* request,
                                                      v1::ListDriverRolloutsResponse* response) {
  return Handle(context_, context, kService, "ListDriverRollouts", *request,
                [&](const Principal&) -> absl::Status {
    auto views = context_.scheduler->rollouts().List(request->pool());
    if (!views.ok()) return views.status();
    for (const auto& view : *views) DriverRolloutToProto(view, response->add_rollouts());
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::SetDriverRolloutPaused(
    grpc::ServerContext* context, const v1::SetDriverRolloutPausedRequest* request,
    v1::DriverRollout* response) {
  return Handle(context_, context, kService, "SetDriverRolloutPaused", *request,
                [&](const Principal&) -> absl::Status {
    const std::string reason = !request->paused()        ? ""
                               : request->reason().empty() ? "paused by an admin"
                                                           : request->reason();
    auto view = context_.scheduler->rollouts().SetPaused(request->pool(), request->paused(), reason);
    if (!view.ok()) return view.status();
    DriverRolloutToProto(*view, response);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::ReportDriverInstall(
    grpc::ServerContext* context, const v1::ReportDriverInstallRequest* request,
    v1::Node* response) {
  return Handle(context_, context, kService, "ReportDriverInstall", *request,
                [&](const Principal& who) -> absl::Status {
    // An agent reports for its own node only, like its heartbeats.
    if (absl::Status s = CheckReportsFor(who, request->node_name(), "ReportDriverInstall",
                                         context_.metrics, inventory());
        !s.ok()) {
      return s;
    }
    auto view = inventory().ReportDriverInstall(DriverInstallReportOf(*request));
    if (!view.ok()) return view.status();
    NodeToProto(*view, response);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::ClearGpuHealth(grpc::ServerContext* context,
                                                  const v1::ClearGpuHealthRequest* request,
                                                  v1::Node* response) {
  return Handle(context_, context, kService, "ClearGpuHealth", *request,
                [&](const Principal&) -> absl::Status {
    auto view = inventory().ClearGpuHealth(request->node_name(), request->gpu_uuid());
    if (!view.ok()) return view.status();
    NodeToProto(*view, response);
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::RotateNodeCredential(
    grpc::ServerContext* context, const v1::RotateNodeCredentialRequest* request,
    v1::RotateNodeCredentialResponse* response) {
  return Handle(context_, context, kService, "RotateNodeCredential", *request,
                [&](const Principal& who) -> absl::Status {
    absl::StatusOr<std::string> token = NewRandomToken();
    if (!token.ok()) return token.status();
    const TokenDigest digest = Sha256(*token);
    auto issued = context_.scheduler->credential_admin().Rotate(
        request->node_name(), std::string(digest.begin(), digest.end()), who.name);
    if (!issued.ok()) return issued.status();
    response->set_node_token(*token);
    *response->mutable_issued_at() =
        TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(issued->issued_at));
    return absl::OkStatus();
  });
}

grpc::Status InventoryServiceImpl::RevokeNodeCredential(
    grpc::ServerContext* context, const v1::RevokeNodeCredentialRequest* request,
    v1::RevokeNodeCredentialResponse* response) {
  return Handle(context_, context, kService, "RevokeNodeCredential", *request,
                [&](const Principal&) -> absl::Status {
    auto revoked = context_.scheduler->credential_admin().Revoke(request->node_name());
    if (!revoked.ok()) return revoked.status();
    response->set_revoked(*revoked);
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
