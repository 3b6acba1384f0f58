// Owns every gRPC service implementation. What they call (the scheduler,
// the scaling controller, the application rules) is built and owned by the
// composition root (app/application.h) and reaches them in the
// ServiceContext.
#ifndef WSCHED_SERVER_GRPC_SERVICES_H_
#define WSCHED_SERVER_GRPC_SERVICES_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "server/grpc/live_authenticator.h"
#include "server/grpc/service_context.h"
#include "server/scheduler/scaling_controller.h"

namespace wsched::grpc_api {

class Services {
 public:
  // `context` names the scheduler and every application rule the services
  // call; `controller` serves WatchScalingSignals. Neither is owned.
  Services(const ServiceContext& context, scheduler::ScalingController* controller);
  ~Services();
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  void RegisterAll(grpc::ServerBuilder& builder);
  // Full names of the services served ("wsched.v1.ClassService").
  std::vector<std::string> Names() const;
  // The node of a per-node token (LiveAuthenticator::SetNodeTokens).
  std::optional<NodeTokenOwner> FindNodeToken(const TokenDigest& digest) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_SERVICES_H_
