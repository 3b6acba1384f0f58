// wsched.v1.ScalingService: level-triggered scaling signals for actuators.
#ifndef WSCHED_SERVER_GRPC_SCALING_SERVICE_H_
#define WSCHED_SERVER_GRPC_SCALING_SERVICE_H_

#include "server/grpc/service_context.h"
#include "wsched/v1/scaling.grpc.pb.h"

namespace wsched::scheduler {
class ScalingController;
}

namespace wsched::grpc_api {

class ScalingServiceImpl final : public v1::ScalingService::Service {
 public:
  ScalingServiceImpl(const ServiceContext& context, scheduler::ScalingController* controller)
      : context_(context), controller_(controller) {}

  grpc::Status GetScalingState(grpc::ServerContext* context,
                               const v1::GetScalingStateRequest* request,
                               v1::ScalingState* response) override;
  grpc::Status WatchScalingSignals(grpc::ServerContext* context,
                                   const v1::WatchScalingSignalsRequest* request,
                                   grpc::ServerWriter<v1::PoolSignal>* writer) override;
  grpc::Status ReportActuator(grpc::ServerContext* context, const v1::ActuatorReport* request,
                              v1::ActuatorReportResponse* response) override;

 private:
  const ServiceContext context_;
  scheduler::ScalingController* const controller_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_SCALING_SERVICE_H_
