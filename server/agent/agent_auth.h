// Which credential the agent's calls present (docs/agent.md, "Node
// identity"), and bootstrap:
//
// - a static token (--token, --token_file) is sent on every call, as is;
// - otherwise the node token in <state_dir>/node-token, when there is one;
// - with a bootstrap token (--bootstrap_token_file) and no node token yet,
//   the agent makes one, saves it, and registers with the bootstrap token
//   and the new token's SHA-256; once the server answers
//   node_credential_issued, every later call presents the node token;
// - a node token the server does not know (UNAUTHENTICATED: the agent
//   crashed before the server stored it, or it was revoked) is registered
//   again through bootstrap with the same token's hash; the server takes
//   that only for a node that does not exist yet (BOOTSTRAP_NODE_EXISTS).
#ifndef WSCHED_SERVER_AGENT_AGENT_AUTH_H_
#define WSCHED_SERVER_AGENT_AGENT_AUTH_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/agent/inventory_client.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::agent {

struct AuthOptions {
  // --token / --token_file: sent on every call; the state directory is not used.
  std::string static_token;
  // --bootstrap_token_file's token; empty: no bootstrap.
  std::string bootstrap_token;
  // Where node-token is kept; empty: no node token.
  std::string state_dir;
};

class AgentAuth {
 public:
  explicit AgentAuth(AuthOptions options) : options_(std::move(options)) {}
  AgentAuth(const AgentAuth&) = delete;
  AgentAuth& operator=(const AgentAuth&) = delete;

  // RegisterNode through `client` with the credential that applies (see
  // above). The node token is read from the state directory each time, so
  // a token an admin installed there (`wschedctl node rotate-credential`)
  // is used from the next registration on. A bad node-token file is an
  // error naming the path and the rule, and nothing is sent.
  absl::StatusOr<wsched::v1::RegisterNodeResponse> Register(InventoryClient& client,
                                                            wsched::v1::RegisterNodeRequest request)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The bearer token of every call but RegisterNode: the static token, the
  // node token once it is known to work or was found saved, else none.
  std::string bearer() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The saved node token; empty when there is none and there is no
  // bootstrap token to make one for. With a bootstrap token a missing one
  // is made and saved first; `fresh` says so (nobody knows it yet).
  absl::StatusOr<std::string> NodeToken(bool* fresh) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<wsched::v1::RegisterNodeResponse> Bootstrap(
      InventoryClient& client, wsched::v1::RegisterNodeRequest request, const std::string& token);

  const AuthOptions options_;
  // The loop is one thread, but bearer() may be asked from anywhere.
  mutable absl::Mutex mu_;
  // The node token presented by calls; empty until one is found saved or issued.
  std::string node_token_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_AGENT_AUTH_H_
