// wsched.internal.v1.ForwardingService: the placer's end of batched
// forwarding (docs/architecture.md, "One placer, many front doors"). A
// front door sends the PlaceWorkspace and StopWorkspace calls it gathered
// in one ForwardCalls; each runs here exactly as the direct call would
// (Handle with the caller's own credential, then the same body) on its
// own blocking-pool thread, so the group commit sees them all at once.
#ifndef WSCHED_SERVER_GRPC_FORWARDING_SERVICE_H_
#define WSCHED_SERVER_GRPC_FORWARDING_SERVICE_H_

#include "absl/time/time.h"
#include "server/grpc/blocking_pool.h"
#include "server/grpc/services.h"
#include "wsched/internal/v1/forwarding.grpc.pb.h"

namespace wsched::grpc_api {

// The most calls one ForwardCalls may carry.
inline constexpr int kMaxForwardedCalls = 1024;

class ForwardingServiceImpl final : public internal::v1::ForwardingService::CallbackService {
 public:
  explicit ForwardingServiceImpl(const ServiceContext& context);

  grpc::ServerUnaryReactor* ForwardCalls(grpc::CallbackServerContext* context,
                                         const internal::v1::ForwardCallsRequest* request,
                                         internal::v1::ForwardCallsResponse* response) override;

 private:
  // One call, as its caller would have had it answered.
  grpc::Status Run(const internal::v1::ForwardedCall& call, absl::Time received,
                   v1::Workspace* out) const;

  const ServiceContext context_;
  // Last: its threads finish their calls before the rest goes.
  BlockingPool blocking_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_FORWARDING_SERVICE_H_
