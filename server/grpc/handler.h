// The shape every RPC handler shares: authorize against the method table,
// run the body (which returns absl::Status), map the status once.
#ifndef WSCHED_SERVER_GRPC_HANDLER_H_
#define WSCHED_SERVER_GRPC_HANDLER_H_

#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "server/grpc/auth.h"
#include "server/grpc/services.h"
#include "server/grpc/status.h"

namespace wsched::grpc_api {

// `body` is called as body(const Principal&) -> absl::Status.
template <typename Body>
grpc::Status Handle(const ServiceContext& services, grpc::ServerContextBase* context,
                    const char* service, const char* method, Body&& body) {
  auto principal = services.auth->Authorize(*context, absl::StrCat("/", service, "/", method));
  if (!principal.ok()) return ToGrpc(principal.status());
  return ToGrpc(body(*principal));
}

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_HANDLER_H_
