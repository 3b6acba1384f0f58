// Start-up checks that no RPC is served without a decision about it: the
// methods of the served services that a table lacks.
#ifndef WSCHED_SERVER_GRPC_METHOD_COVERAGE_H_
#define WSCHED_SERVER_GRPC_METHOD_COVERAGE_H_

#include <functional>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wsched::grpc_api {

// For every method of `service_names`, `missing` names it (or returns "" when
// it is covered). INTERNAL listing what is not covered, as `what`.
inline absl::Status CheckEveryMethod(
    const std::vector<std::string>& service_names, const std::string& what,
    const std::function<std::string(const std::string& service,
                                    const google::protobuf::MethodDescriptor& method)>& missing) {
  std::vector<std::string> uncovered;
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const std::string& name : service_names) {
    const auto* service = pool->FindServiceByName(name);
    if (service == nullptr) return absl::NotFoundError(absl::StrCat("unknown service ", name));
    for (int i = 0; i < service->method_count(); ++i) {
      std::string gap = missing(name, *service->method(i));
      if (!gap.empty()) uncovered.push_back(std::move(gap));
    }
  }
  if (uncovered.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("RPCs without ", what, ": ", absl::StrJoin(uncovered, ", ")));
}

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_METHOD_COVERAGE_H_
