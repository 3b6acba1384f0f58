// Server transport security: plaintext, TLS, or mutual TLS, with
// certificate files that are re-read while the server runs.
#ifndef WSCHED_SERVER_GRPC_TLS_SERVER_H_
#define WSCHED_SERVER_GRPC_TLS_SERVER_H_

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wsched::grpc_api {

struct TlsServerOptions {
  std::string cert_path;  // PEM chain, leaf first. Empty (with key_path): plaintext.
  std::string key_path;   // PEM private key of the leaf.
  // PEM CA bundle that client certificates must chain to; empty: no client
  // certificates are asked for.
  std::string client_ca_path;
  // Refuse handshakes without a client certificate (else a client may
  // choose a bearer token instead; a certificate it sends is still verified).
  bool require_client_cert = false;
  // How often the files are checked for new contents. Rotation tools write
  // new files; connections made after the next check use them.
  absl::Duration reload_interval = absl::Minutes(1);
};

bool TlsEnabled(const TlsServerOptions& options);

// Checks the files first (readable, PEM, key matches certificate, CA
// parses) so that a mistake is a start-up error naming the flag instead of
// failed handshakes later.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsServerOptions& options);

// Subject and expiry of the first certificate in a PEM file, for the log.
absl::StatusOr<std::string> DescribeCertificate(const std::string& path);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_TLS_SERVER_H_
