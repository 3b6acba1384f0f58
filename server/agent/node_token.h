// The node's own bearer token (docs/agent.md, "Node identity"). The agent
// makes it itself, like a kubelet makes its key: it is saved in
// <state_dir>/node-token before anything is sent, and only its SHA-256
// travels, once, in the bootstrap registration. So the secret never crosses
// the network, and a crash between saving and registering loses nothing:
// the next start registers the same token again.
#ifndef WSCHED_SERVER_AGENT_NODE_TOKEN_H_
#define WSCHED_SERVER_AGENT_NODE_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wsched::agent {

inline constexpr char kNodeTokenFile[] = "node-token";

// <state_dir>/node-token.
std::string NodeTokenPath(const std::string& state_dir);

// The saved token (surrounding whitespace dropped, so an admin's
// `wschedctl node rotate-credential NAME > node-token` reads back as is).
// NotFound when there is none; FailedPrecondition for a path that is not a
// regular file (a symlink included) or that group or others may access;
// InvalidArgument for contents that are not one bearer token. Each error
// names the path and the rule.
absl::StatusOr<std::string> LoadNodeToken(const std::string& state_dir);

// Saves `token` as <state_dir>/node-token, mode 0600: the directory is
// made (0700) when missing, the token written to a temporary file beside
// it, synced, renamed over the old one and the directory synced, so a
// crash leaves the old token or the new one, never a torn file.
absl::Status SaveNodeToken(const std::string& state_dir, absl::string_view token);

// A new node token: 32 random bytes, base64url (43 characters).
absl::StatusOr<std::string> NewNodeToken();

// Lower-case hex SHA-256 of `token`: RegisterNodeRequest.node_token_sha256.
std::string NodeTokenSha256(absl::string_view token);

// OK for a bearer token: 22 to 512 characters of RFC 6750's token68 set
// (A-Z a-z 0-9 - . _ ~ + /, then optional trailing =).
absl::Status CheckBearerToken(absl::string_view token);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NODE_TOKEN_H_
