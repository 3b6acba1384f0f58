#include "server/agent/inventory_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "server/core/error_reason.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::agent {
namespace {

// ErrorInfo.domain of wsched's reasons (server/grpc/status.h).
constexpr char kErrorDomain[] = "wsched.io";

// The reason of the ErrorInfo in the status details, with its metadata;
// nullopt when there is none the agent knows.
std::optional<core::ErrorDetails> ReasonOf(const grpc::Status& status) {
  google::rpc::Status rpc;
  if (status.error_details().empty() || !rpc.ParseFromString(status.error_details())) {
    return std::nullopt;
  }
  for (const auto& any : rpc.details()) {
    google::rpc::ErrorInfo info;
    if (!any.UnpackTo(&info) || info.domain() != kErrorDomain) continue;
    for (core::ErrorReason reason : core::AllErrorReasons()) {
      if (core::ErrorReasonName(reason) != info.reason()) continue;
      core::ErrorDetails details;
      details.reason = reason;
      details.metadata.insert(info.metadata().begin(), info.metadata().end());
      return details;
    }
  }
  return std::nullopt;
}

// gRPC and absl share the canonical code numbers.
absl::Status ToAbsl(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status converted(static_cast<absl::StatusCode>(status.error_code()),
                         status.error_message());
  std::optional<core::ErrorDetails> details = ReasonOf(status);
  return details ? core::WithDetails(std::move(converted), *details) : converted;
}

class GrpcInventoryClient final : public InventoryClient {
 public:
  GrpcInventoryClient(const GrpcClientOptions& options, std::shared_ptr<grpc::Channel> channel)
      : options_(options), stub_(wsched::v1::InventoryService::NewStub(std::move(channel))) {}

  absl::StatusOr<wsched::v1::RegisterNodeResponse> RegisterNode(
      const wsched::v1::RegisterNodeRequest& request, const std::string& bearer) override {
    grpc::ClientContext context;
    Prepare(context, bearer);
    wsched::v1::RegisterNodeResponse response;
    absl::Status status = ToAbsl(stub_->RegisterNode(&context, request, &response));
    if (!status.ok()) return status;
    return response;
  }

  absl::StatusOr<wsched::v1::HeartbeatResponse> Heartbeat(
      const wsched::v1::HeartbeatRequest& request, const std::string& bearer) override {
    grpc::ClientContext context;
    Prepare(context, bearer);
    wsched::v1::HeartbeatResponse response;
    absl::Status status = ToAbsl(stub_->Heartbeat(&context, request, &response));
    if (!status.ok()) return status;
    return response;
  }

  absl::StatusOr<wsched::v1::Node> ReportDriverInstall(
      const wsched::v1::ReportDriverInstallRequest& request, const std::string& bearer) override {
    grpc::ClientContext context;
    Prepare(context, bearer);
    wsched::v1::Node response;
    absl::Status status = ToAbsl(stub_->ReportDriverInstall(&context, request, &response));
    if (!status.ok()) return status;
    return response;
  }

 private:
  void Prepare(grpc::ClientContext& context, const std::string& bearer) const {
    context.set_deadline(std::chrono::system_clock::now() +
                         absl::ToChronoMilliseconds(options_.rpc_timeout));
    if (!bearer.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", bearer));
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
