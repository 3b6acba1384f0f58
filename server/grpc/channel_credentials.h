// Client side of TLS and mutual TLS, shared by wschedctl, wsched-agent and
// the load tools, so every client verifies the server the same way.
#ifndef WSCHED_SERVER_GRPC_CHANNEL_CREDENTIALS_H_
#define WSCHED_SERVER_GRPC_CHANNEL_CREDENTIALS_H_

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

namespace wsched::grpc_api {

struct ClientTlsOptions {
  bool tls = false;         // Any of the paths below turns TLS on too.
  std::string ca_path;      // PEM roots to verify the server with; empty: the system's.
  std::string cert_path;    // Client certificate chain for mutual TLS (with key_path).
  std::string key_path;
  std::string server_name;  // Name to verify the server certificate against; empty: the target host.
  // Certificate files are re-read this often, so a long-running client
  // (the agent) picks up a rotated certificate on its next connection.
  unsigned int reload_interval_seconds = 60;

  bool enabled() const {
    return tls || !ca_path.empty() || !cert_path.empty() || !key_path.empty();
  }
};

// A channel to `target`: plaintext unless TLS is enabled. `args` may carry
// the caller's own channel arguments. Fails for unreadable files or a
// certificate without its key.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateClientChannel(
    const std::string& target, const ClientTlsOptions& options,
    grpc::ChannelArguments args = grpc::ChannelArguments());

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_CHANNEL_CREDENTIALS_H_
