// wsched.v1.PlacementService: the control plane's hot path.
#ifndef WSCHED_SERVER_GRPC_PLACEMENT_SERVICE_H_
#define WSCHED_SERVER_GRPC_PLACEMENT_SERVICE_H_

#include "server/grpc/blocking_pool.h"
#include "server/grpc/placement_forwarder.h"
#include "server/grpc/service_context.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::grpc_api {

// PlaceWorkspace and StopWorkspace, the calls that wait for a group
// commit, use gRPC's callback API: a front door forwards them without a
// thread waiting, and the placer runs them on a BlockingPool instead of
// one synchronous-server thread each (docs/architecture.md, "Callback
// handlers on the hot path"). The reads stay synchronous.
// WatchWorkspaces is a callback stream too, over raw bytes: an idle stream
// holds no thread, and the streams sent the same changes share one
// encoding (watch_workspaces.h).
using PlacementServiceBase =
    v1::PlacementService::WithCallbackMethod_PlaceWorkspace<
        v1::PlacementService::WithCallbackMethod_StopWorkspace<
            v1::PlacementService::WithRawCallbackMethod_WatchWorkspaces<
                v1::PlacementService::Service>>>;

class PlacementServiceImpl final : public PlacementServiceBase {
 public:
  explicit PlacementServiceImpl(const ServiceContext& context);

  grpc::ServerUnaryReactor* PlaceWorkspace(grpc::CallbackServerContext* context,
                                           const v1::PlaceWorkspaceRequest* request,
                                           v1::Workspace* response) override;
  grpc::ServerUnaryReactor* StopWorkspace(grpc::CallbackServerContext* context,
                                          const v1::StopWorkspaceRequest* request,
                                          v1::Workspace* response) override;
  grpc::Status GetWorkspace(grpc::ServerContext* context, const v1::GetWorkspaceRequest* request,
                            v1::Workspace* response) override;
  // Any replica records a ready report (pipeline/workspace_ready.h): it
  // moves no capacity, so it is neither forwarded nor group-committed.
  grpc::Status ReportWorkspaceReady(grpc::ServerContext* context,
                                    const v1::ReportWorkspaceReadyRequest* request,
                                    v1::Workspace* response) override;
  grpc::Status ListWorkspaces(grpc::ServerContext* context,
                              const v1::ListWorkspacesRequest* request,
                              v1::ListWorkspacesResponse* response) override;
  grpc::Status WatchWorkspace(grpc::ServerContext* context,
                              const v1::WatchWorkspaceRequest* request,
                              grpc::ServerWriter<v1::Workspace>* writer) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* WatchWorkspaces(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;

 private:
  // The shared shape of the two callback handlers: forward to the placer
  // when another replica places, else run `body` (absl::StatusOr<
  // scheduler::WorkspaceView>()) under Handle on the blocking pool.
  template <typename Request, typename Body>
  grpc::ServerUnaryReactor* Serve(
      grpc::CallbackServerContext* context, const char* method, const Request* request,
      v1::Workspace* response,
      void (PlacementForwarder::*forward)(const grpc::ServerContextBase&, const std::string&,
                                          const Request*, v1::Workspace*,
                                          PlacementForwarder::Done),
      Body body);

  const ServiceContext context_;
  // Last: their threads finish their calls before the rest goes. The
  // watch streams' listings and catch-ups have their own, smaller pool, so
  // a wave of reconnecting streams never delays a placement.
  BlockingPool watch_openings_;
  BlockingPool blocking_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_PLACEMENT_SERVICE_H_
