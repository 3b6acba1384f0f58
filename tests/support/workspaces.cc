#include "tests/support/workspaces.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "tests/support/rpc_details.h"
#include "tests/support/server_process.h"

namespace wsched::testing {

grpc::Status PlaceAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                     const std::string& class_id, v1::Workspace* out,
                     std::chrono::microseconds deadline) {
  grpc::ClientContext context;
  Authorize(context, kControlPlaneToken);
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::PlaceWorkspaceRequest request;
  request.set_workspace_id(id);
  request.set_org_id("o-1");
  request.set_project_id("p-1");
  request.set_user_id("u-1");
  request.set_class_id(class_id);
  return v1::PlacementService::NewStub(channel)->PlaceWorkspace(&context, request, out);
}

namespace {

// The RetryInfo delay of a refusal the API says to retry; nullopt: not one.
std::optional<std::chrono::milliseconds> RetryDelay(const grpc::Status& status) {
  constexpr std::chrono::milliseconds kLeast(50);
  if (status.error_code() == grpc::StatusCode::ABORTED) {
    if (ReasonOf(status) != "CONCURRENT_CHANGE") return std::nullopt;
    return kLeast;
  }
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return std::nullopt;
  std::optional<google::rpc::RetryInfo> info = DetailOf<google::rpc::RetryInfo>(status);
  if (!info) return std::nullopt;
  const auto delay = std::chrono::seconds(info->retry_delay().seconds()) +
                     std::chrono::nanoseconds(info->retry_delay().nanos());
  return std::max(kLeast, std::chrono::duration_cast<std::chrono::milliseconds>(delay));
}

}  // namespace

grpc::Status PlaceRetryingAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                             const std::string& class_id, v1::Workspace* out,
                             std::atomic<int>* retried, int tries) {
  grpc::Status status;
  for (int call = 0; call < tries; ++call) {
    if (call > 0 && retried != nullptr) ++*retried;
    status = PlaceAs(channel, id, class_id, out, std::chrono::seconds(30));
    std::optional<std::chrono::milliseconds> delay = RetryDelay(status);
    if (!delay) return status;
    std::this_thread::sleep_for(*delay);
  }
  return status;
}

grpc::Status StopAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                    v1::Workspace* out) {
  grpc::ClientContext context;
  Authorize(context, kControlPlaneToken);
  v1::StopWorkspaceRequest request;
  request.set_workspace_id(id);
  return v1::PlacementService::NewStub(channel)->StopWorkspace(&context, request, out);
}

grpc::Status GetAs(const std::shared_ptr<grpc::Channel>& channel, const std::string& id,
                   v1::Workspace* out) {
  grpc::ClientContext context;
  Authorize(context, kControlPlaneToken);
  v1::GetWorkspaceRequest request;
  request.set_workspace_id(id);
  return v1::PlacementService::NewStub(channel)->GetWorkspace(&context, request, out);
}

}  // namespace wsched::testing
