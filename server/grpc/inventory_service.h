// wsched.v1.InventoryService: node pools, nodes, GPUs, driver work.
#ifndef WSCHED_SERVER_GRPC_INVENTORY_SERVICE_H_
#define WSCHED_SERVER_GRPC_INVENTORY_SERVICE_H_

#include "server/grpc/blocking_pool.h"
#include "server/grpc/service_context.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::grpc_api {

// WatchNodes is a callback stream over raw bytes, as WatchWorkspaces
// (watch_stream.h): an idle stream holds no thread, and the streams sent
// the same changes share one encoding. The other calls stay synchronous.
using InventoryServiceBase =
    v1::InventoryService::WithRawCallbackMethod_WatchNodes<
        v1::InventoryService::Service>;

class InventoryServiceImpl final : public InventoryServiceBase {
public:
  explicit InventoryServiceImpl(const ServiceContext &context);

  grpc::Status RegisterNode(grpc::ServerContext* context, const v1::RegisterNodeRequest* request,
                            v1::RegisterNodeResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override;
  grpc::Status CordonNode(grpc::ServerContext* context, const v1::NodeNameRequest* request,
                          v1::Node* response) override;
  grpc::Status DrainNode(grpc::ServerContext* context, const v1::NodeNameRequest* request,
                         v1::Node* response) override;
  grpc::Status UncordonNode(grpc::ServerContext* context, const v1::NodeNameRequest* request,
                            v1::Node* response) override;
  grpc::Status RemoveNode(grpc::ServerContext* context, const v1::NodeNameRequest* request,
                          v1::Empty* response) override;
  grpc::Status GetNode(grpc::ServerContext* context, const v1::NodeNameRequest* request,
                       v1::Node* response) override;
  grpc::Status ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest* request,
                         v1::ListNodesResponse* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer> *
  WatchNodes(grpc::CallbackServerContext *context,
             const grpc::ByteBuffer *request) override;
  grpc::Status ListPools(grpc::ServerContext* context, const v1::ListPoolsRequest* request,
                         v1::ListPoolsResponse* response) override;
  grpc::Status ListDriverRollouts(grpc::ServerContext* context,
                                  const v1::ListDriverRolloutsRequest* request,
                                  v1::ListDriverRolloutsResponse* response) override;
  grpc::Status SetDriverRolloutPaused(grpc::ServerContext* context,
                                      const v1::SetDriverRolloutPausedRequest* request,
                                      v1::DriverRollout* response) override;
  grpc::Status ListDriverWork(grpc::ServerContext* context,
                              const v1::ListDriverWorkRequest* request,
                              v1::ListDriverWorkResponse* response) override;
  grpc::Status ReportDriverInstall(grpc::ServerContext* context,
                                   const v1::ReportDriverInstallRequest* request,
                                   v1::Node* response) override;
  grpc::Status ClearGpuHealth(grpc::ServerContext* context,
                              const v1::ClearGpuHealthRequest* request,
                              v1::Node* response) override;
  grpc::Status RotateNodeCredential(grpc::ServerContext* context,
                                    const v1::RotateNodeCredentialRequest* request,
                                    v1::RotateNodeCredentialResponse* response) override;
  grpc::Status RevokeNodeCredential(grpc::ServerContext* context,
                                    const v1::RevokeNodeCredentialRequest* request,
                                    v1::RevokeNodeCredentialResponse* response) override;

 private:
  grpc::Status SetState(grpc::ServerContext* context, const char* method,
                        const v1::NodeNameRequest* request, core::NodeState state,
                        v1::Node* response);
  // The replica's node inventory, which every handler here calls.
  inventory::NodeInventory& inventory() const { return context_.scheduler->inventory(); }
  const ServiceContext context_;
  // The node streams' listings and catch-ups, apart from the workspace
  // streams' (placement_service.h). Last: its threads finish first.
  BlockingPool watch_openings_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_INVENTORY_SERVICE_H_
