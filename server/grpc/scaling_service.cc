#include "server/grpc/scaling_service.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "server/convert/scaling_convert.h"
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
  return Handle(context_, context, kService, "GetScalingState", *request, [&](const Principal&) {
    scheduler::ScalingController::State state = controller_->Current();
    for (const auto& signal : state.pools) *response->add_pools() = convert::ToProto(signal);
    response->set_leader(state.leader);
    return absl::OkStatus();
  });
}

grpc::Status ScalingServiceImpl::WatchScalingSignals(grpc::ServerContext* context,
                                                     const v1::WatchScalingSignalsRequest* request,
                                                     grpc::ServerWriter<v1::PoolSignal>* writer) {
  return Handle(context_, context, kService, "WatchScalingSignals", *request,
                [&](const Principal&) -> absl::Status {
    std::set<std::string> wanted(request->pools().begin(), request->pools().end());
    // Level-triggered: the full current state first, then every change.
    std::map<std::string, int64_t> sent;
    int64_t version = -1;
    while (!context->IsCancelled() && !controller_->stopping()) {
      scheduler::ScalingController::State state = controller_->Current();
      if (state.version != version) {
        version = state.version;
        for (const auto& signal : state.pools) {
          if (!wanted.empty() && !wanted.count(signal.pool)) continue;
          auto it = sent.find(signal.pool);
          if (it != sent.end() && it->second == signal.generation) continue;
          if (!writer->Write(convert::ToProto(signal))) return absl::OkStatus();
          sent[signal.pool] = signal.generation;
        }
      }
      controller_->WaitForChange(version, absl::Seconds(1));
    }
    return absl::OkStatus();
  });
}

grpc::Status ScalingServiceImpl::ReportActuator(grpc::ServerContext* context,
                                                const v1::ActuatorReport* request,
                                                v1::ActuatorReportResponse* response) {
  return Handle(context_, context, kService, "ReportActuator", *request,
                [&](const Principal&) -> absl::Status {
    const char* state = ReportState(request->state());
    return controller_->Report({0, request->pool(), request->generation(), state,
                                request->instances(), request->detail()});
  });
}

}  // namespace wsched::grpc_api
