// PlaceWorkspace and StopWorkspace as the control plane calls them, for
// tests: org o-1, project p-1, user u-1.
#ifndef WSCHED_TESTS_SUPPORT_WORKSPACES_H_
#define WSCHED_TESTS_SUPPORT_WORKSPACES_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::testing {

grpc::Status PlaceAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                     const std::string& class_id, v1::Workspace* out,
                     std::chrono::microseconds deadline = std::chrono::seconds(10));
// PlaceAs as a careful client calls it (docs/api.md, "Errors"): an answer
// the API says to retry (ABORTED CONCURRENT_CHANGE, as a placement that
// kept losing races; UNAVAILABLE with RetryInfo) is retried after the
// RetryInfo's delay (at least 50 ms), up to `tries` calls in all. The
// retries made are added to `retried` when it is not null.
grpc::Status PlaceRetryingAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                             const std::string& class_id, v1::Workspace* out,
                             std::atomic<int>* retried = nullptr, int tries = 5);
grpc::Status GetAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                   v1::Workspace* out);
grpc::Status StopAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                    v1::Workspace* out);

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_WORKSPACES_H_
