#include "server/agent/agent_auth.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/agent/agent_log.h"
#include "server/agent/node_token.h"
#include "server/core/error_reason.h"

namespace wsched::agent {
namespace {

bool HasReason(const absl::Status& status, core::ErrorReason reason) {
  std::optional<core::ErrorDetails> details = core::DetailsOf(status);
  return details.has_value() && details->reason == reason;
}

// The same status with more said; the server's details stay attached.
absl::Status Explained(const absl::Status& status, absl::string_view more) {
  absl::Status out(status.code(), absl::StrCat(status.message(), ". ", more));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

// What an operator does about BOOTSTRAP_NODE_EXISTS (docs/agent.md).
std::string NodeExistsAdvice(const std::string& node, const std::string& token_path) {
  return absl::StrCat(
      "BOOTSTRAP_NODE_EXISTS: the name ", node,
      " is taken and a bootstrap token registers only new nodes. If this machine is that node, "
      "its own token re-registers it: restore ",
      token_path, ", or have an admin run `wschedctl node rotate-credential ", node,
      "` and install the token it prints as ", token_path,
      " (mode 0600). If the name is another machine's, set another --node_name, or have an admin "
      "remove the node (`wschedctl node remove ",
      node, "`)");
}

}  // namespace

std::string AgentAuth::bearer() const {
  if (!options_.static_token.empty()) return options_.static_token;
  absl::MutexLock lock(&mu_);
  return node_token_;
}

absl::StatusOr<std::string> AgentAuth::NodeToken(bool* fresh) {
  *fresh = false;
  if (options_.state_dir.empty()) return std::string();
  const std::string path = NodeTokenPath(options_.state_dir);
  absl::StatusOr<std::string> saved = LoadNodeToken(options_.state_dir);
  if (!absl::IsNotFound(saved.status())) return saved;
  std::string in_use = bearer();
  if (!in_use.empty()) {
    // Gone under a running agent: the server still knows the token in use.
    Log(absl::StrCat(path, " went missing; saving the node token in use again"));
    if (absl::Status s = SaveNodeToken(options_.state_dir, in_use); !s.ok()) return s;
    return in_use;
  }
  if (options_.bootstrap_token.empty()) return std::string();
  absl::StatusOr<std::string> made = NewNodeToken();
  if (!made.ok()) return made.status();
  // Saved before anything is sent: a crash after the server stored its
  // hash must not lose the only copy.
  if (absl::Status s = SaveNodeToken(options_.state_dir, *made); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("saving a new node token: ", s.message()));
  }
  Log(absl::StrCat("made a new node token and saved it in ", path));
  *fresh = true;
  return made;
}

absl::StatusOr<wsched::v1::RegisterNodeResponse> AgentAuth::Register(
    InventoryClient& client, wsched::v1::RegisterNodeRequest request) {
  if (!options_.static_token.empty()) return client.RegisterNode(request, options_.static_token);
  bool fresh = false;
  absl::StatusOr<std::string> token = NodeToken(&fresh);
  if (!token.ok()) return token.status();
  // No node token and no bootstrap: a client certificate, or no credential.
  if (token->empty()) return client.RegisterNode(request, "");
  if (!fresh) {
    absl::StatusOr<wsched::v1::RegisterNodeResponse> response =
        client.RegisterNode(request, *token);
    if (response.ok()) {
      absl::MutexLock lock(&mu_);
      node_token_ = *token;
      return response;
    }
    if (!absl::IsUnauthenticated(response.status()) || options_.bootstrap_token.empty()) {
      return response;
    }
    // Stored never (a crash between saving and registering) or no more
    // (revoked, or the node removed): bootstrap knows only the first.
    Log(absl::StrCat("the server does not know the node token in ",
                     NodeTokenPath(options_.state_dir),
                     "; registering with the bootstrap token and the same node token"));
  }
  return Bootstrap(client, std::move(request), *token);
}

absl::StatusOr<wsched::v1::RegisterNodeResponse> AgentAuth::Bootstrap(
    InventoryClient& client, wsched::v1::RegisterNodeRequest request, const std::string& token) {
  request.set_node_token_sha256(NodeTokenSha256(token));
  absl::StatusOr<wsched::v1::RegisterNodeResponse> response =
      client.RegisterNode(request, options_.bootstrap_token);
  if (!response.ok()) {
    if (HasReason(response.status(), core::ErrorReason::kBootstrapNodeExists)) {
      return Explained(response.status(),
                       NodeExistsAdvice(request.node().name(), NodeTokenPath(options_.state_dir)));
    }
    return response;
  }
  if (!response->node_credential_issued()) {
    return absl::FailedPreconditionError(
        "the server registered the node through bootstrap but did not store its token "
        "(node_credential_issued is false; a server without node identity?): use --token_file");
  }
  absl::MutexLock lock(&mu_);
  node_token_ = token;
  Log(absl::StrCat("bootstrap: the server stored this node's token; every later call presents it (",
                   NodeTokenPath(options_.state_dir), ")"));
  return response;
}

}  // namespace wsched::agent
