#include "server/grpc/scaling_service.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "server/core/validation.h"
#include "server/grpc/handler.h"
#include "server/scheduler/scaling_controller.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.ScalingService";

const char* ReportState(v1::ActuatorReport::InstanceState state) {
  switch (state) {
    case v1::ActuatorReport::INSTANCE_STATE_CREATING: return "creating";
    case v1::ActuatorReport::INSTANCE_STATE_RUNNING: return "running";
    case v1::ActuatorReport::INSTANCE_STATE_FAILED: return "failed";
    case v1::ActuatorReport::INSTANCE_STATE_OUT_OF_RESOURCES: return "out_of_resources";
    default: return nullptr;
  }
}

}  // namespace

grpc::Status ScalingServiceImpl::GetScalingState(grpc::ServerContext* context,
                                                 const v1::GetScalingStateRequest* request,
                                                 v1::ScalingState* response) {
  return Handle(context_, context, kService, "GetScalingState", [&](const Principal&) {
    scheduler::ScalingController::State state = controller_->Current();
    for (auto& signal : state.pools) *response->add_pools() = std::move(signal);
    response->set_leader(state.leader);
    return absl::OkStatus();
  });
}

grpc::Status ScalingServiceImpl::WatchScalingSignals(grpc::ServerContext* context,
                                                     const v1::WatchScalingSignalsRequest* request,
                                                     grpc::ServerWriter<v1::PoolSignal>* writer) {
  return Handle(context_, context, kService, "WatchScalingSignals", [&](const Principal&) -> absl::Status {
    if (request->pools_size() > 1000) return absl::InvalidArgumentError("pools: at most 1000");
    std::set<std::string> wanted(request->pools().begin(), request->pools().end());
    // Level-triggered: the full current state first, then every change.
    std::map<std::string, int64_t> sent;
    int64_t version = -1;
    while (!context->IsCancelled() && !controller_->stopping()) {
      scheduler::ScalingController::State state = controller_->Current();
      if (state.version != version) {
        version = state.version;
        for (const auto& signal : state.pools) {
          if (!wanted.empty() && !wanted.count(signal.pool())) continue;
          auto it = sent.find(signal.pool());
          if (it != sent.end() && it->second == signal.generation()) continue;
          if (!writer->Write(signal)) return absl::OkStatus();
          sent[signal.pool()] = signal.generation();
        }
      }
      controller_->WaitForChange(version, absl::Now() + absl::Seconds(1));
    }
    return absl::OkStatus();
  });
}

grpc::Status ScalingServiceImpl::ReportActuator(grpc::ServerContext* context,
                                                const v1::ActuatorReport* request,
                                                v1::ActuatorReportResponse* response) {
  return Handle(context_, context, kService, "ReportActuator", [&](const Principal&) -> absl::Status {
    if (!core::IsDnsLabel(request->pool())) {
      return absl::InvalidArgumentError("pool: must be a pool id (a DNS label)");
    }
    const char* state = ReportState(request->state());
    if (state == nullptr) {
      return absl::InvalidArgumentError(
          "state: must be CREATING, RUNNING, FAILED or OUT_OF_RESOURCES");
    }
    if (request->instances() < 0 || request->generation() < 0) {
      return absl::InvalidArgumentError("instances, generation: must be >= 0");
    }
    if (!core::IsBoundedText(request->detail(), 1024)) {
      return absl::InvalidArgumentError("detail: at most 1024 printable characters");
    }
    return controller_->Report({0, request->pool(), request->generation(), state,
                                request->instances(), request->detail()});
  });
}

}  // namespace wsched::grpc_api
