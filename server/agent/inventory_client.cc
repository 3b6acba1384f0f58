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
  explicit GrpcInventoryClient(const GrpcClientOptions& options)
      : options_(options),
        stub_(wsched::v1::InventoryService::NewStub(
            grpc::CreateChannel(options.server, Credentials(options)))) {}

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
  static std::shared_ptr<grpc::ChannelCredentials> Credentials(const GrpcClientOptions& options) {
    if (!options.tls) return grpc::InsecureChannelCredentials();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_ca_pem;
    return grpc::SslCredentials(ssl);
  }

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

std::unique_ptr<InventoryClient> NewGrpcInventoryClient(const GrpcClientOptions& options) {
  return std::make_unique<GrpcInventoryClient>(options);
}

}  // namespace wsched::agent
