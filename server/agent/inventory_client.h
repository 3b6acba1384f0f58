// The InventoryService calls the agent makes, behind an interface so the
// register/heartbeat loop can be tested without a server. The bearer token
// is an argument of each call, not of the client: one registration may
// present the pool's bootstrap token and every call after it the node's
// own (docs/agent.md, "Node identity"), and nothing is shared between
// calls that could change under one in flight.
#ifndef WSCHED_SERVER_AGENT_INVENTORY_CLIENT_H_
#define WSCHED_SERVER_AGENT_INVENTORY_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/grpc/channel_credentials.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::agent {

class InventoryClient {
 public:
  virtual ~InventoryClient() = default;
  // `bearer` is sent as "authorization: Bearer <bearer>"; empty: none (a
  // client certificate, or a server without authentication). A refusal
  // keeps the server's ErrorInfo reason as core::DetailsOf(status)->reason.
  virtual absl::StatusOr<wsched::v1::RegisterNodeResponse> RegisterNode(
      const wsched::v1::RegisterNodeRequest& request, const std::string& bearer) = 0;
  virtual absl::StatusOr<wsched::v1::HeartbeatResponse> Heartbeat(
      const wsched::v1::HeartbeatRequest& request, const std::string& bearer) = 0;
  // The start or end of a driver install the agent runs (driver_runner.h).
  virtual absl::StatusOr<wsched::v1::Node> ReportDriverInstall(
      const wsched::v1::ReportDriverInstallRequest& request, const std::string& bearer) = 0;
};

struct GrpcClientOptions {
  std::string server;  // host:port
  // TLS (and, with a certificate, mutual TLS) as wschedctl does it; the
  // files are re-read while the agent runs, so rotated node certificates
  // are used from the next connection on.
  grpc_api::ClientTlsOptions tls;
  // Per call, so a hung server cannot stall heartbeats or shutdown.
  absl::Duration rpc_timeout = absl::Seconds(10);
};

// Fails for unreadable TLS files or a certificate without its key.
absl::StatusOr<std::unique_ptr<InventoryClient>> NewGrpcInventoryClient(
    const GrpcClientOptions& options);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_INVENTORY_CLIENT_H_
