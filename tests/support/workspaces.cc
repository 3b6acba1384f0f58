#include "tests/support/workspaces.h"

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
