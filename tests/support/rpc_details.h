// The google.rpc details of a refused call (docs/api.md, "Errors"), as a
// test reads them.
#ifndef WSCHED_TESTS_SUPPORT_RPC_DETAILS_H_
#define WSCHED_TESTS_SUPPORT_RPC_DETAILS_H_

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace wsched::testing {

// The first detail of type T (google::rpc::ErrorInfo, RetryInfo,
// PreconditionFailure, ...); nullopt when the status carries none.
template <typename T>
std::optional<T> DetailOf(const grpc::Status& status) {
  google::rpc::Status rpc;
  if (!rpc.ParseFromString(status.error_details())) return std::nullopt;
  for (const auto& any : rpc.details()) {
    T out;
    if (any.Is<T>() && any.UnpackTo(&out)) return out;
  }
  return std::nullopt;
}

// The ErrorInfo reason ("CONCURRENT_CHANGE"); "" when there is none.
inline std::string ReasonOf(const grpc::Status& status) {
  std::optional<google::rpc::ErrorInfo> info = DetailOf<google::rpc::ErrorInfo>(status);
  return info ? info->reason() : "";
}

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_RPC_DETAILS_H_
