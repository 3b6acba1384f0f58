#include "server/grpc/credentials_file.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/core/validation.h"

namespace wsched::grpc_api {
namespace {

constexpr size_t kMaxNameLength = 64;
constexpr size_t kMaxScopeEntries = 1000;
constexpr size_t kMaxScopeValueLength = 128;

absl::Status Invalid(const std::string& where, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
}

// A scalar's text; InvalidArgument naming `where` for a list or a map.
absl::StatusOr<std::string> Scalar(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar()) return Invalid(where, "must be a string");
  return node.Scalar();
}

absl::Status CheckKeys(const YAML::Node& entry, const std::set<std::string>& allowed,
                       const std::string& where) {
  for (const auto& item : entry) {
    std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
    if (allowed.count(key) == 0) {
      return Invalid(absl::StrCat(where, ".", key.substr(0, 40)),
                     absl::StrCat("unknown key; one of ", absl::StrJoin(allowed, ", ")));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::set<std::string>> Scope(const YAML::Node& entry, const char* key,
                                            const std::string& where) {
  std::set<std::string> out;
  const YAML::Node node = entry[key];
  if (!node) return out;
  std::string path = absl::StrCat(where, ".", key);
  if (!node.IsSequence()) return Invalid(path, "must be a list");
  if (node.size() > kMaxScopeEntries) {
    return Invalid(path, absl::StrCat("at most ", kMaxScopeEntries, " entries"));
  }
  for (size_t i = 0; i < node.size(); ++i) {
    std::string item_path = absl::StrCat(path, "[", i, "]");
    auto value = Scalar(node[i], item_path);
    if (!value.ok()) return value.status();
    if (value->empty() || !core::IsBoundedText(*value, kMaxScopeValueLength)) {
      return Invalid(item_path, absl::StrCat("must be 1..", kMaxScopeValueLength,
                                             " printable characters"));
    }
    out.insert(*value);
  }
  return out;
}

// name, role and scopes, shared by token and identity entries. `where`
// becomes "tokens[2] (ops)" once the name is known.
absl::StatusOr<Principal> ParsePrincipal(const YAML::Node& entry, std::string& where) {
  Principal principal;
  principal.name = where;
  if (entry["name"]) {
    auto name = Scalar(entry["name"], where + ".name");
    if (!name.ok()) return name.status();
    if (name->empty() || !core::IsBoundedText(*name, kMaxNameLength)) {
      return Invalid(where + ".name", absl::StrCat("must be 1..", kMaxNameLength,
                                                   " printable characters"));
    }
    principal.name = *name;
    where = absl::StrCat(where, " (", *name, ")");
  }
  if (!entry["role"]) return Invalid(where + ".role", "is required");
  auto role_text = Scalar(entry["role"], where + ".role");
  if (!role_text.ok()) return role_text.status();
  auto role = ParseRole(*role_text);
  if (!role.ok()) return Invalid(where + ".role", role.status().message());
  principal.roles.insert(*role);
  for (auto [key, scope] : {std::pair{"orgs", &principal.orgs},
                            std::pair{"projects", &principal.projects},
                            std::pair{"pools", &principal.pools}}) {
    auto values = Scope(entry, key, where);
    if (!values.ok()) return values.status();
    *scope = *std::move(values);
  }
  if (*role == Role::kProjectOwner) {
    if (principal.orgs.empty() && principal.projects.empty()) {
      return Invalid(where, "a project-owner needs orgs or projects");
    }
  } else if (!principal.orgs.empty() || !principal.projects.empty()) {
    // Only project owners are scoped by org/project; on another role the
    // lists would look like a limit that is not there.
    return Invalid(where, absl::StrCat("orgs and projects only scope project-owner entries, not ",
                                       *role_text));
  }
  if (*role != Role::kAgent && !principal.pools.empty()) {
    return Invalid(where, absl::StrCat("pools only scope agent entries, not ", *role_text));
  }
  return principal;
}

// `node: NAME` and `bootstrap: true` (tokens only: CheckKeys), on agent
// entries only.
absl::Status ParseNodeBinding(const YAML::Node& entry, const std::string& where,
                              Principal& principal) {
  const bool agent = principal.Has(Role::kAgent);
  if (entry["node"]) {
    auto node = Scalar(entry["node"], where + ".node");
    if (!node.ok()) return node.status();
    if (!agent) return Invalid(where + ".node", "only an agent entry speaks for a node");
    if (!core::IsDnsSubdomain(*node)) return Invalid(where + ".node", "must be a node name (a DNS name)");
    principal.node = *node;
    if (principal.pools.empty()) {
      return Invalid(where + ".pools", "a node's credential needs the pool it may report the node in");
    }
  }
  if (entry["bootstrap"]) {
    bool bootstrap = false;
    if (!entry["bootstrap"].IsScalar() || !YAML::convert<bool>::decode(entry["bootstrap"], bootstrap)) {
      return Invalid(where + ".bootstrap", "must be true or false");
    }
    if (bootstrap && !agent) return Invalid(where + ".bootstrap", "only an agent entry bootstraps nodes");
    if (bootstrap && !principal.node.empty()) {
      return Invalid(where, "a bootstrap token registers new nodes; it cannot also name a node");
    }
    if (bootstrap && principal.pools.empty()) {
      return Invalid(where + ".pools", "a bootstrap token needs the pools it may add nodes to");
    }
    principal.bootstrap = bootstrap;
  }
  return absl::OkStatus();
}

// An agent entry speaks for one node, or bootstraps new ones, unless the
// operator chose shared pool credentials.
absl::Status CheckAgentBinding(const Principal& principal, const std::string& where,
                               const CredentialOptions& options) {
  if (!principal.Has(Role::kAgent) || options.allow_shared_agent_credentials) {
    return absl::OkStatus();
  }
  if (!principal.node.empty() || principal.bootstrap) return absl::OkStatus();
  return Invalid(where,
                 "an agent credential must speak for one node: add node: NAME, use an identity "
                 "pattern with {node}, or make it a bootstrap token (bootstrap: true); a "
                 "credential for every node of its pools needs --allow_shared_agent_credentials");
}

absl::StatusOr<TokenEntry> ParseToken(const YAML::Node& entry, std::string where,
                                      const CredentialOptions& options,
                                      std::vector<std::string>& warnings) {
  if (absl::Status s = CheckKeys(entry, {"name", "token", "sha256", "role", "orgs", "projects",
                                         "pools", "node", "bootstrap"},
                                 where);
      !s.ok()) {
    return s;
  }
  auto principal = ParsePrincipal(entry, where);
  if (!principal.ok()) return principal.status();
  if (absl::Status s = ParseNodeBinding(entry, where, *principal);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckAgentBinding(*principal, where, options); !s.ok()) return s;
  TokenEntry out;
  out.principal = *std::move(principal);
  const bool has_token = static_cast<bool>(entry["token"]);
  const bool has_hash = static_cast<bool>(entry["sha256"]);
  if (has_token == has_hash) {
    return Invalid(where, "needs exactly one of sha256 (the token's SHA-256, preferred) or token");
  }
  if (has_hash) {
    auto hex = Scalar(entry["sha256"], where + ".sha256");
    if (!hex.ok()) return hex.status();
    auto digest = ParseHexDigest(*hex);
    if (!digest.ok()) return Invalid(where + ".sha256", digest.status().message());
    out.digest = *digest;
    return out;
  }
  auto token = Scalar(entry["token"], where + ".token");
  if (!token.ok()) return token.status();
  if (token->size() < kMinTokenLength) {
    return Invalid(where + ".token",
                   absl::StrCat("must be >= ", kMinTokenLength, " characters (",
                                "wschedctl token create makes one)"));
  }
  if (token->size() > kMaxTokenLength || !core::IsBoundedText(*token, kMaxTokenLength) ||
      absl::StrContains(*token, ' ')) {
    return Invalid(where + ".token", absl::StrCat("must be at most ", kMaxTokenLength,
                                                  " printable characters without spaces"));
  }
  if (options.require_hashed_tokens) {
    return Invalid(where + ".token",
                   "clear-text tokens are refused (--require_hashed_tokens); store "
                   "sha256: <hex> instead (wschedctl token hash)");
  }
  warnings.push_back(absl::StrCat(where, ": clear-text token; store its sha256 instead ",
                                  "(wschedctl token hash), so the file does not leak it"));
  out.digest = Sha256(*token);
  return out;
}

bool IsUri(absl::string_view identity) { return absl::StrContains(identity, "://"); }

// "{node}.{pool}.nodes.example.com": each placeholder a whole label, at most
// one of each, {pool} only beside {node}, and two or more literal labels
// (one operator's subdomain, never a bare "{node}.com").
absl::Status ParsePattern(const std::string& where, IdentityEntry& out) {
  const absl::Status invalid = Invalid(
      where + ".identity",
      "a node pattern is DNS labels with {node} (and optionally {pool}) as whole labels and "
      "two or more literal labels, e.g. \"{node}.{pool}.nodes.example.com\"");
  if (IsUri(out.identity) || absl::StrContains(out.identity, '*')) return invalid;
  out.kind = IdentityEntry::Kind::kPattern;
  out.labels = absl::StrSplit(out.identity, '.');
  std::vector<absl::string_view> literal;
  for (size_t i = 0; i < out.labels.size(); ++i) {
    const std::string& label = out.labels[i];
    if (label == "{node}" || label == "{pool}") {
      int& slot = label == "{node}" ? out.node_label : out.pool_label;
      if (slot >= 0) return invalid;
      slot = static_cast<int>(i);
    } else if (core::IsDnsLabel(label)) {
      literal.push_back(label);
    } else {
      return invalid;
    }
  }
  if (out.node_label < 0 || literal.size() < 2) return invalid;
  if (!out.principal.Has(Role::kAgent)) {
    return Invalid(where + ".identity", "a {node} pattern binds nodes: only for agent entries");
  }
  if (!out.principal.node.empty()) {
    return Invalid(where + ".node", "a {node} pattern names the node itself");
  }
  if (out.pool_label < 0 && out.principal.pools.empty()) {
    return Invalid(where + ".pools", "a {node} pattern needs a {pool} label or the pools its nodes are in");
  }
  return absl::OkStatus();
}

absl::StatusOr<IdentityEntry> ParseIdentity(const YAML::Node& entry, std::string where,
                                            const CredentialOptions& options) {
  if (absl::Status s = CheckKeys(entry, {"name", "identity", "role", "orgs", "projects", "pools",
                                         "node"},
                                 where);
      !s.ok()) {
    return s;
  }
  auto principal = ParsePrincipal(entry, where);
  if (!principal.ok()) return principal.status();
  if (absl::Status s = ParseNodeBinding(entry, where, *principal);
      !s.ok()) {
    return s;
  }
  if (!entry["identity"]) return Invalid(where + ".identity", "is required");
  auto identity = Scalar(entry["identity"], where + ".identity");
  if (!identity.ok()) return identity.status();
  IdentityEntry out;
  out.principal = *std::move(principal);
  if (identity->empty() || !core::IsBoundedText(*identity, kMaxIdentityLength) ||
      absl::StripAsciiWhitespace(*identity) != *identity) {
    return Invalid(where + ".identity",
                   absl::StrCat("must be 1..", kMaxIdentityLength,
                                " printable characters without surrounding spaces"));
  }
  out.identity = IsUri(*identity) ? *identity : absl::AsciiStrToLower(*identity);
  if (absl::StrContains(out.identity, '{')) {
    if (absl::Status s = ParsePattern(where, out); !s.ok()) return s;
    return out;  // Bound to a node by construction.
  }
  if (absl::StrContains(out.identity, '*')) {
    absl::string_view suffix = out.identity;
    // Only a whole leftmost label, and never a bare "*.com"-style suffix of
    // one label: a wildcard should cover one operator's subdomain.
    if (IsUri(suffix) || !absl::ConsumePrefix(&suffix, "*.") || !core::IsDnsSubdomain(suffix) ||
        !absl::StrContains(suffix, '.')) {
      return Invalid(where + ".identity",
                     "a wildcard is \"*.\" followed by a DNS name of two or more labels");
    }
    if (!out.principal.node.empty()) {
      return Invalid(where + ".node", "a wildcard matches many certificates, not one node's");
    }
    out.kind = IdentityEntry::Kind::kWildcard;
  }
  if (absl::Status s = CheckAgentBinding(out.principal, where, options); !s.ok()) return s;
  return out;
}

bool WildcardMatches(absl::string_view pattern, absl::string_view name) {
  absl::string_view suffix = pattern.substr(1);  // ".gpu.example"
  if (!absl::EndsWith(name, suffix)) return false;
  absl::string_view label = name.substr(0, name.size() - suffix.size());
  return core::IsDnsLabel(label);
}

// The principal `entry` makes of certificate identity `name`, if it matches.
std::optional<Principal> Match(const IdentityEntry& entry, const std::string& name) {
  using Kind = IdentityEntry::Kind;
  if (entry.kind == Kind::kExact) {
    if (entry.identity != name) return std::nullopt;
    return entry.principal;
  }
  if (IsUri(name)) return std::nullopt;
  Principal principal = entry.principal;
  principal.name = absl::StrCat(principal.name, "/", name);
  if (entry.kind == Kind::kWildcard) {
    if (!WildcardMatches(entry.identity, name)) return std::nullopt;
    return principal;
  }
  std::vector<absl::string_view> labels = absl::StrSplit(name, '.');
  if (labels.size() != entry.labels.size()) return std::nullopt;
  for (size_t i = 0; i < labels.size(); ++i) {
    const int at = static_cast<int>(i);
    if (at == entry.node_label || at == entry.pool_label) {
      if (!core::IsDnsLabel(labels[i])) return std::nullopt;
    } else if (labels[i] != entry.labels[i]) {
      return std::nullopt;
    }
  }
  principal.node = std::string(labels[entry.node_label]);
  if (entry.pool_label >= 0) {
    std::string pool(labels[entry.pool_label]);
    // A listed scope narrows the pattern: a pool outside it matches nothing.
    if (!principal.pools.empty() && principal.pools.count(pool) == 0) return std::nullopt;
    principal.pools = {pool};
  }
  return principal;
}

}  // namespace

absl::StatusOr<CredentialTable> CredentialTable::Parse(absl::string_view yaml,
                                                       const CredentialOptions& options) {
  CredentialTable table;
  if (yaml.size() > kMaxCredentialsFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxCredentialsFileBytes, " bytes"));
  }
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    if (!root.IsMap()) return absl::InvalidArgumentError("tokens: must be a list");
    if (absl::Status s = CheckKeys(root, {"tokens", "identities"}, "file"); !s.ok()) return s;
    const YAML::Node tokens = root["tokens"];
    const YAML::Node identities = root["identities"];
    if ((tokens && !tokens.IsSequence()) || (!tokens && !identities)) {
      return absl::InvalidArgumentError("tokens: must be a list");
    }
    if (identities && !identities.IsSequence()) {
      return absl::InvalidArgumentError("identities: must be a list");
    }
    if ((tokens ? tokens.size() : 0) > kMaxCredentialEntries ||
        (identities ? identities.size() : 0) > kMaxCredentialEntries) {
      return absl::InvalidArgumentError(
          absl::StrCat("tokens, identities: at most ", kMaxCredentialEntries, " entries each"));
    }
    std::vector<std::string> token_where;
    for (size_t i = 0; tokens && i < tokens.size(); ++i) {
      std::string where = absl::StrCat("tokens[", i, "]");
      if (!tokens[i].IsMap()) return Invalid(where, "must be a map");
      auto entry = ParseToken(tokens[i], where, options, table.warnings_);
      if (!entry.ok()) return entry.status();
      if (entry->principal.name != where) {
        where = absl::StrCat(where, " (", entry->principal.name, ")");
      }
      const std::string key(entry->digest.begin(), entry->digest.end());
      if (auto [at, added] = table.token_index_.emplace(key, table.tokens_.size()); !added) {
        return Invalid(where, absl::StrCat("same token as ", token_where[at->second]));
      }
      token_where.push_back(where);
      table.tokens_.push_back(*std::move(entry));
    }
    std::set<std::string> seen;
    for (size_t i = 0; identities && i < identities.size(); ++i) {
      std::string where = absl::StrCat("identities[", i, "]");
      if (!identities[i].IsMap()) return Invalid(where, "must be a map");
      auto entry = ParseIdentity(identities[i], where, options);
      if (!entry.ok()) return entry.status();
      if (!seen.insert(entry->identity).second) {
        return Invalid(where + ".identity",
                       absl::StrCat("\"", entry->identity, "\" is listed twice"));
      }
      table.identities_.push_back(*std::move(entry));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not YAML: ", e.what()));
  }
  return table;
}

const Principal* CredentialTable::FindToken(const TokenDigest& digest) const {
  // Keyed by the SHA-256 of the token, never the token: how long a lookup
  // takes can tell a caller about a digest, which does not bring a guess of
  // the 128+-bit secret any closer.
  auto it = token_index_.find(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
  return it == token_index_.end() ? nullptr : &tokens_[it->second].principal;
}

std::optional<Principal> CredentialTable::FindIdentity(
    const std::vector<std::string>& identities) const {
  std::vector<std::string> normalized;
  for (const std::string& identity : identities) {
    normalized.push_back(IsUri(identity) ? identity : absl::AsciiStrToLower(identity));
  }
  using Kind = IdentityEntry::Kind;
  for (Kind kind : {Kind::kExact, Kind::kPattern, Kind::kWildcard}) {
    for (const IdentityEntry& entry : identities_) {
      if (entry.kind != kind) continue;
      for (const std::string& name : normalized) {
        if (std::optional<Principal> principal = Match(entry, name)) return principal;
      }
    }
  }
  return std::nullopt;
}

std::string TokenEntryYaml(const std::string& name, const TokenDigest& digest, Role role,
                           const TokenEntryScope& scope) {
  std::string line =
      absl::StrCat("  - {name: ", name, ", sha256: ", ToHex(digest), ", role: ", RoleName(role));
  for (const auto& [key, values] :
       {std::pair{"orgs", &scope.orgs}, std::pair{"projects", &scope.projects},
        std::pair{"pools", &scope.pools}}) {
    if (values->empty()) continue;
    absl::StrAppend(&line, ", ", key, ": [", absl::StrJoin(*values, ", "), "]");
  }
  if (!scope.node.empty()) absl::StrAppend(&line, ", node: ", scope.node);
  if (scope.bootstrap) absl::StrAppend(&line, ", bootstrap: true");
  absl::StrAppend(&line, "}");
  return line;
}

}  // namespace wsched::grpc_api
