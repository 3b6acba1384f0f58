// absl::Status -> grpc::Status, in one place. The canonical codes are
// numerically identical, so the mapping keeps code and message.
#ifndef WSCHED_SERVER_GRPC_STATUS_H_
#define WSCHED_SERVER_GRPC_STATUS_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace wsched::grpc_api {

inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_STATUS_H_
