// Who may call what. Callers present a bearer token or a verified client
// certificate; either maps to a principal (tokens/identities file, see
// credentials_file.h). One table, kMethodRoles in auth.cc, lists every RPC
// with the roles allowed to call it; the server refuses to start if any
// served RPC lacks an entry.
#ifndef WSCHED_SERVER_GRPC_AUTH_H_
#define WSCHED_SERVER_GRPC_AUTH_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/grpc/credentials_file.h"
#include "server/grpc/principal.h"

namespace wsched::grpc_api {

// What a call carries to prove who it is.
struct CallerCredentials {
  // The "authorization" metadata, when sent ("Bearer <token>").
  std::optional<std::string> authorization;
  // Identities of the client certificate the TLS handshake verified (see
  // peer_identity.h); empty without one.
  std::vector<std::string> certificate_identities;
};

// The node a per-node token belongs to (tokens the server issued at
// bootstrap or rotation, kept hashed in PostgreSQL; docs/security.md).
struct NodeTokenOwner {
  std::string node;
  std::string pool;
};
using NodeTokenLookup = std::function<std::optional<NodeTokenOwner>(const TokenDigest&)>;

class Authenticator {
 public:
  // The tokens/identities file; errors name the file and the entry.
  static absl::StatusOr<Authenticator> FromYamlFile(const std::string& path,
                                                    const CredentialOptions& options = {});
  static absl::StatusOr<Authenticator> FromYaml(const std::string& text,
                                                const CredentialOptions& options = {});
  // Development only: every caller is an unscoped admin + control-plane.
  static Authenticator AllowAll();

  // UNAUTHENTICATED without a known token or certificate identity (a token,
  // when sent, decides: a certificate never rescues a wrong token);
  // PERMISSION_DENIED when no role of the caller may call `method`
  // ("/wsched.v1.ClassService/ApplyCatalog"). A token the file does not
  // list may be a node's own (`node_tokens`, when given): that node's agent.
  absl::StatusOr<Principal> Authorize(const CallerCredentials& caller, const std::string& method,
                                      const NodeTokenLookup* node_tokens = nullptr) const;
  absl::StatusOr<Principal> Authorize(const grpc::ServerContextBase& context,
                                      const std::string& method,
                                      const NodeTokenLookup* node_tokens = nullptr) const;

  const CredentialTable& table() const { return table_; }

 private:
  bool allow_all_ = false;
  CredentialTable table_;
};

// The roles allowed to call `method`; NOT_FOUND for an RPC without a decision.
absl::StatusOr<std::vector<Role>> RolesForMethod(const std::string& method);

// Every RPC with a decision, in table order.
std::vector<std::string> MethodsInTable();

// Every method of the given services has an entry; lists the missing ones.
absl::Status CheckMethodTableCovers(const std::vector<std::string>& service_names);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_AUTH_H_
