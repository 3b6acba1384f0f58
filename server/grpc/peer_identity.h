// The identity of a verified client certificate, as the tokens file's
// `identities:` entries name it.
#ifndef WSCHED_SERVER_GRPC_PEER_IDENTITY_H_
#define WSCHED_SERVER_GRPC_PEER_IDENTITY_H_

#include <string>
#include <vector>

#include <grpcpp/security/auth_context.h>

namespace wsched::grpc_api {

// The DNS and URI subject alternative names of the peer's certificate, or
// its subject common name when it has neither (RFC 6125: a certificate with
// SANs is identified by them, not by its CN). Empty for a plaintext call or
// a TLS call without a client certificate. gRPC only fills these after the
// certificate chain was verified against --tls_client_ca.
std::vector<std::string> CertificateIdentities(const grpc::AuthContext& context);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_PEER_IDENTITY_H_
