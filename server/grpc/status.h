// absl::Status -> grpc::Status, in one place. The canonical codes are
// numerically identical, so code and message are kept; the reason and typed
// details attached with server/core/error_reason.h (or, for an untagged
// status, the generic reason of its code) become a google.rpc.Status in
// grpc::Status::error_details(), which gRPC sends as the
// grpc-status-details-bin trailer: an ErrorInfo (domain "wsched.io", the
// reason's short name, the metadata) first, then BadRequest, QuotaFailure,
// PreconditionFailure, ResourceInfo and RetryInfo when the error has them.
#ifndef WSCHED_SERVER_GRPC_STATUS_H_
#define WSCHED_SERVER_GRPC_STATUS_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "google/rpc/status.pb.h"

namespace wsched::grpc_api {

inline constexpr char kErrorDomain[] = "wsched.io";

// The google.rpc.Status an error is sent with; OK gives code 0 and nothing.
google::rpc::Status ToRpcStatus(const absl::Status& status);

grpc::Status ToGrpc(const absl::Status& status);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_STATUS_H_
