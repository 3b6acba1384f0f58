// Counts and times every RPC (health checks included) without touching the
// handlers: a server interceptor created per call.
#ifndef WSCHED_SERVER_GRPC_METRICS_INTERCEPTOR_H_
#define WSCHED_SERVER_GRPC_METRICS_INTERCEPTOR_H_

#include <grpcpp/support/server_interceptor.h>

#include "server/metrics/metrics.h"

namespace wsched::grpc_api {

class MetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(metrics::Metrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  metrics::Metrics* const metrics_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_METRICS_INTERCEPTOR_H_
