// The tokens/identities file: which bearer token or client-certificate
// identity is which principal.
//
//   tokens:
//     - {name: ops, sha256: "<64 hex>", role: admin}
//     - {name: p42-owner, sha256: "...", role: project-owner, orgs: [o-1], projects: [p-42]}
//     - {name: legacy, token: "<24+ chars>", role: control-plane}   # clear text: warned
//     - {name: h100-join, sha256: "...", role: agent, pools: [gpu-h100], bootstrap: true}
//     - {name: n7-agent, sha256: "...", role: agent, pools: [gpu-h100], node: n7}
//   identities:
//     - {name: nodes, identity: "{node}.{pool}.nodes.example.com", role: agent}
//     - {name: n9, identity: "n9.gpu.example.com", role: agent, pools: [gpu-h100], node: n9}
//     - {name: saas, identity: "spiffe://example.com/saas", role: control-plane}
//
// Agent credentials speak for one node (docs/security.md, "Node identity"):
// `node: NAME`, an identity pattern whose `{node}` label is the node's name
// (and `{pool}` its pool), or a pool's bootstrap token, which registers only
// new nodes and stores each one's own token. An agent entry that is none of
// these speaks for every node of its pools and is refused unless
// allow_shared_agent_credentials is set.
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

#include "absl/container/flat_hash_map.h"
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
  // Agent entries bound to no node (any node of their pools) are accepted
  // (--allow_shared_agent_credentials): weaker, one stolen credential
  // speaks for the whole pool.
  bool allow_shared_agent_credentials = false;
};

struct TokenEntry {
  TokenDigest digest;
  Principal principal;
};

struct IdentityEntry {
  std::string identity;  // Lower-cased unless it is a URI.
  enum class Kind {
    kExact,
    kWildcard,  // "*.<suffix>": any one leftmost label.
    kPattern,   // "{node}.<...>" / "{node}.{pool}.<...>": labels name the node (and pool).
  };
  Kind kind = Kind::kExact;
  // kPattern: the DNS labels, and which of them are {node} and {pool} (-1: none).
  std::vector<std::string> labels;
  int node_label = -1;
  int pool_label = -1;
  Principal principal;
};

class CredentialTable {
 public:
  // Every broken rule names the entry ("tokens[2] (ops).sha256: ...").
  static absl::StatusOr<CredentialTable> Parse(absl::string_view yaml,
                                               const CredentialOptions& options = {});

  // The principal whose token has this digest (a hash lookup); nullptr
  // when none.
  const Principal* FindToken(const TokenDigest& digest) const;
  // The principal of the first identity that names the certificate: exact
  // entries, then patterns, then wildcards, each in file order. nullopt
  // when none. A pattern or wildcard match names the principal after the
  // certificate identity too; a pattern binds its node (and pool).
  std::optional<Principal> FindIdentity(const std::vector<std::string>& identities) const;

  size_t token_count() const { return tokens_.size(); }
  size_t identity_count() const { return identities_.size(); }
  // Things that work but should not stay so (clear-text tokens).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<TokenEntry> tokens_;
  absl::flat_hash_map<std::string, size_t> token_index_;  // Digest bytes -> index in tokens_.
  std::vector<IdentityEntry> identities_;
  std::vector<std::string> warnings_;
};

// The YAML line for a token entry with the token's hash, as `wschedctl token
// create` prints it: `  - {name: NAME, sha256: HEX, role: ROLE, pools: [a, b], node: N}`.
struct TokenEntryScope {
  std::vector<std::string> orgs;
  std::vector<std::string> projects;
  std::vector<std::string> pools;
  std::string node;        // Agent: the one node it speaks for.
  bool bootstrap = false;  // Agent: a pool's bootstrap token.
};
std::string TokenEntryYaml(const std::string& name, const TokenDigest& digest, Role role,
                           const TokenEntryScope& scope);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_CREDENTIALS_FILE_H_
