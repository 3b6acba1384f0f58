#include "server/grpc/metrics_interceptor.h"

#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"

namespace wsched::grpc_api {
namespace {

using grpc::experimental::InterceptionHookPoints;

class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(metrics::Metrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)), start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      // gRPC and Abseil share the canonical code numbers and names.
      metrics_->ObserveRpc(method_,
                           absl::StatusCodeToString(
                               static_cast<absl::StatusCode>(methods->GetSendStatus().error_code())),
                           absl::Now() - start_);
    }
    methods->Proceed();
  }

 private:
  metrics::Metrics* const metrics_;
  const std::string method_;
  const absl::Time start_;
};

}  // namespace

grpc::experimental::Interceptor* MetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new MetricsInterceptor(metrics_, info->method());
}

}  // namespace wsched::grpc_api
