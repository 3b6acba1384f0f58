// PlaceWorkspace and StopWorkspace as the control plane calls them, for
// tests: org o-1, project p-1, user u-1.
#ifndef WSCHED_TESTS_SUPPORT_WORKSPACES_H_
#define WSCHED_TESTS_SUPPORT_WORKSPACES_H_

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::testing {

grpc::Status PlaceAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                     const std::string& class_id, v1::Workspace* out,
                     std::chrono::microseconds deadline = std::chrono::seconds(10));
grpc::Status GetAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                   v1::Workspace* out);
grpc::Status StopAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                    v1::Workspace* out);

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_WORKSPACES_H_
