// wsched.v1.PlacementService: the control plane's hot path.
#ifndef WSCHED_SERVER_GRPC_PLACEMENT_SERVICE_H_
#define WSCHED_SERVER_GRPC_PLACEMENT_SERVICE_H_

#include "server/grpc/services.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::grpc_api {

class PlacementServiceImpl final : public v1::PlacementService::Service {
 public:
  explicit PlacementServiceImpl(const ServiceContext& context) : context_(context) {}

  grpc::Status PlaceWorkspace(grpc::ServerContext* context,
                              const v1::PlaceWorkspaceRequest* request,
                              v1::Workspace* response) override;
  grpc::Status StopWorkspace(grpc::ServerContext* context, const v1::StopWorkspaceRequest* request,
                             v1::Workspace* response) override;
  grpc::Status GetWorkspace(grpc::ServerContext* context, const v1::GetWorkspaceRequest* request,
                            v1::Workspace* response) override;
  grpc::Status ListWorkspaces(grpc::ServerContext* context,
                              const v1::ListWorkspacesRequest* request,
                              v1::ListWorkspacesResponse* response) override;
  grpc::Status WatchWorkspace(grpc::ServerContext* context,
                              const v1::WatchWorkspaceRequest* request,
                              grpc::ServerWriter<v1::Workspace>* writer) override;

 private:
  const ServiceContext context_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_PLACEMENT_SERVICE_H_
