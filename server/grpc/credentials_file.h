// The tokens/identities file: which bearer token or client-certificate
// identity is which principal.
//
//   tokens:
//     - {name: ops, sha256: "<64 hex>", role: admin}
//     - {name: p42-owner, sha256: "...", role: project-owner, orgs: [o-1], projects: [p-42]}
//     - {name: legacy, token: "<24+ chars>", role: control-plane}   # clear text: warned
//   identities:
//     - {name: h100-nodes, identity: "*.gpu-h100.nodes.example.com", role: agent, pools: [gpu-h100]}
//     - {name: saas, identity: "spiffe://example.com/saas", role: control-plane}
//
// `sha256` is the hex SHA-256 of the token (`wschedctl token create`), so the
// file never needs the token itself. An identity is matched against the
// verified client certificate's DNS and URI subject alternative names, or
// its subject CN when it has neither; "*." matches exactly one DNS label.
#ifndef WSCHED_SERVER_GRPC_CREDENTIALS_FILE_H_
#define WSCHED_SERVER_GRPC_CREDENTIALS_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/grpc/principal.h"
#include "server/grpc/token_hash.h"

namespace wsched::grpc_api {

inline constexpr size_t kMaxCredentialEntries = 10000;
inline constexpr size_t kMaxIdentityLength = 255;
inline constexpr size_t kMaxCredentialsFileBytes = 4 << 20;

struct CredentialOptions {
  // Clear-text `token:` entries are refused instead of warned about.
  bool require_hashed_tokens = false;
};

struct TokenEntry {
  TokenDigest digest;
  Principal principal;
};

struct IdentityEntry {
  std::string identity;  // Lower-cased unless it is a URI.
  bool wildcard = false;  // identity is "*.<suffix>".
  Principal principal;
};

class CredentialTable {
 public:
  // Every broken rule names the entry ("tokens[2] (ops).sha256: ...").
  static absl::StatusOr<CredentialTable> Parse(absl::string_view yaml,
                                               const CredentialOptions& options = {});

  // The principal whose token has this digest, checking every entry in
  // constant time per entry; nullptr when none.
  const Principal* FindToken(const TokenDigest& digest) const;
  // The principal of the first identity that names the certificate: exact
  // entries before wildcard ones, each in file order. nullptr when none.
  // A wildcard match names the principal after the certificate identity too.
  std::optional<Principal> FindIdentity(const std::vector<std::string>& identities) const;

  size_t token_count() const { return tokens_.size(); }
  size_t identity_count() const { return identities_.size(); }
  // Things that work but should not stay so (clear-text tokens).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<TokenEntry> tokens_;
  std::vector<IdentityEntry> identities_;
  std::vector<std::string> warnings_;
};

// The YAML line for a token entry with the token's hash, as `wschedctl token
// create` prints it: `  - {name: NAME, sha256: HEX, role: ROLE, pools: [a, b]}`.
std::string TokenEntryYaml(const std::string& name, const TokenDigest& digest, Role role,
                           const std::vector<std::string>& orgs,
                           const std::vector<std::string>& projects,
                           const std::vector<std::string>& pools);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_CREDENTIALS_FILE_H_
