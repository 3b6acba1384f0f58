#include "server/grpc/peer_identity.h"

#include <grpc/grpc_security_constants.h>

namespace wsched::grpc_api {
namespace {

void Append(const grpc::AuthContext& context, const char* property,
            std::vector<std::string>& out) {
  for (const grpc::string_ref& value : context.FindPropertyValues(property)) {
    out.emplace_back(value.data(), value.size());
  }
}

}  // namespace

std::vector<std::string> CertificateIdentities(const grpc::AuthContext& context) {
  std::vector<std::string> identities;
  // Without a peer certificate there is no x509 property at all.
  if (context.FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty()) return identities;
  Append(context, GRPC_PEER_DNS_PROPERTY_NAME, identities);
  Append(context, GRPC_PEER_URI_PROPERTY_NAME, identities);
  if (identities.empty()) Append(context, GRPC_X509_CN_PROPERTY_NAME, identities);
  return identities;
}

}  // namespace wsched::grpc_api
