#include "server/grpc/channel_credentials.h"

#include <fstream>

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include "absl/strings/str_cat.h"

namespace wsched::grpc_api {
namespace {

absl::Status Readable(const std::string& path, const char* what) {
  if (path.empty()) return absl::OkStatus();
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read ", path));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateClientChannel(
    const std::string& target, const ClientTlsOptions& options, grpc::ChannelArguments args) {
  if (!options.enabled()) {
    return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  }
  if (options.cert_path.empty() != options.key_path.empty()) {
    return absl::InvalidArgumentError("a client certificate and its key go together");
  }
  if (absl::Status s = Readable(options.ca_path, "CA file"); !s.ok()) return s;
  if (absl::Status s = Readable(options.cert_path, "certificate file"); !s.ok()) return s;
  if (absl::Status s = Readable(options.key_path, "key file"); !s.ok()) return s;

  grpc::experimental::TlsChannelCredentialsOptions tls;
  if (!options.ca_path.empty() || !options.cert_path.empty()) {
    // The watcher re-reads the files; a read error keeps the last good ones.
    tls.set_certificate_provider(
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
            options.key_path, options.cert_path, options.ca_path,
            options.reload_interval_seconds));
    if (!options.ca_path.empty()) tls.watch_root_certs();
    if (!options.cert_path.empty()) tls.watch_identity_key_cert_pairs();
  }
  // Chain to a trusted root *and* the name the client meant to reach.
  tls.set_verify_server_certs(true);
  tls.set_certificate_verifier(
      std::make_shared<grpc::experimental::HostNameCertificateVerifier>());
  if (!options.server_name.empty()) {
    args.SetSslTargetNameOverride(options.server_name);
  }
  return grpc::CreateCustomChannel(target, grpc::experimental::TlsCredentials(tls), args);
}

}  // namespace wsched::grpc_api
