#include "server/agent/inventory_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::agent {
namespace {

// gRPC and absl share the canonical code numbers.
absl::Status ToAbsl(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

class GrpcInventoryClient final : public InventoryClient {
 public:
  GrpcInventoryClient(const GrpcClientOptions& options, std::shared_ptr<grpc::Channel> channel)
      : options_(options), stub_(wsched::v1::InventoryService::NewStub(std::move(channel))) {}

  absl::StatusOr<wsched::v1::RegisterNodeResponse> RegisterNode(
      const wsched::v1::RegisterNodeRequest& request) override {
    grpc::ClientContext context;
    Prepare(context);
    wsched::v1::RegisterNodeResponse response;
    absl::Status status = ToAbsl(stub_->RegisterNode(&context, request, &response));
    if (!status.ok()) return status;
    return response;
  }

  absl::StatusOr<wsched::v1::HeartbeatResponse> Heartbeat(
      const wsched::v1::HeartbeatRequest& request) override {
    grpc::ClientContext context;
    Prepare(context);
    wsched::v1::HeartbeatResponse response;
    absl::Status status = ToAbsl(stub_->Heartbeat(&context, request, &response));
    if (!status.ok()) return status;
    return response;
  }

 private:
  void Prepare(grpc::ClientContext& context) const {
    context.set_deadline(std::chrono::system_clock::now() +
                         absl::ToChronoMilliseconds(options_.rpc_timeout));
    if (!options_.token.empty()) {
      context.AddMetadata("authorization", absl::StrCat("Bearer ", options_.token));
    }
  }

  const GrpcClientOptions options_;
  const std::unique_ptr<wsched::v1::InventoryService::Stub> stub_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<InventoryClient>> NewGrpcInventoryClient(
    const GrpcClientOptions& options) {
  auto channel = grpc_api::CreateClientChannel(options.server, options.tls);
  if (!channel.ok()) return channel.status();
  return std::make_unique<GrpcInventoryClient>(options, *std::move(channel));
}

}  // namespace wsched::agent
